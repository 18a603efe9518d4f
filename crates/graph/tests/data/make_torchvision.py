"""Exports the torchvision models behind tpusim's built-ins to ONNX with their weights
stripped (dims kept, data removed: the importer only reads shapes) and records
torchvision's own figures in `torchvision.json`: parameter count
(`sum(p.numel())`), MACs of every Conv2d/Linear measured with forward hooks
(output elements × in_channels/groups × kh × kw, or in × out for Linear), and the
output shape.

Run (torch from the TPU-MLIR venv, torchvision installed beside it without deps;
TPUMLIR_VENV: a Python 3.10 venv with `pip install tpu_mlir==1.30.2`, TORCHVISION_LIB:
any folder outside the repository for torchvision):
    $TPUMLIR_VENV/bin/pip install --no-deps --target "$TORCHVISION_LIB" torchvision==0.26.0
    PYTHONPATH="$TORCHVISION_LIB" $TPUMLIR_VENV/bin/python make_torchvision.py
"""

import json

import onnx
import torch
import torchvision

MODELS = {
    "resnet18": torchvision.models.resnet18,
    "resnet50": torchvision.models.resnet50,
    "mobilenetv2": torchvision.models.mobilenet_v2,
    "vgg16": torchvision.models.vgg16,
}


def macs_of(model, x):
    total = [0]

    def conv_hook(m, inp, out):
        kh, kw = m.kernel_size
        total[0] += out.numel() * (m.in_channels // m.groups) * kh * kw

    def linear_hook(m, inp, out):
        total[0] += out.numel() * m.in_features

    hooks = []
    for m in model.modules():
        if isinstance(m, torch.nn.Conv2d):
            hooks.append(m.register_forward_hook(conv_hook))
        elif isinstance(m, torch.nn.Linear):
            hooks.append(m.register_forward_hook(linear_hook))
    with torch.no_grad():
        out = model(x)
    for h in hooks:
        h.remove()
    return total[0], list(out.shape)


def main():
    figures = {}
    for name, ctor in MODELS.items():
        model = ctor(weights=None).eval()
        x = torch.zeros(1, 3, 224, 224)
        macs, out_shape = macs_of(model, x)
        params = sum(p.numel() for p in model.parameters())
        figures[name] = {"params": params, "macs": macs, "output_shape": out_shape}
        path = f"tv_{name}.onnx"
        torch.onnx.export(model, x, path, opset_version=13, dynamo=False,
                          input_names=["input"], output_names=["logits"])
        m = onnx.load(path)
        for t in m.graph.initializer:
            t.ClearField("raw_data")
            t.ClearField("float_data")
        onnx.save(m, path)
        print(name, figures[name])
    with open("torchvision.json", "w") as f:
        json.dump(figures, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
