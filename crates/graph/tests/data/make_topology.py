"""Records what SCALE-Sim 3.0.0 itself computes for the topology CSVs in `topology/`:
per-layer ofmap size and MACs, and the total (`topology/scalesim.json`).

Run (from this folder; SCALESIM_VENV: a virtualenv with `pip install scalesim==3.0.0`):
    $SCALESIM_VENV/bin/python make_topology.py
"""

import json

from scalesim.topology_utils import topologies

out = {}
for name, gemm in [("mobilenet_head.csv", False), ("gemm.csv", True)]:
    t = topologies()
    t.load_arrays(topofile=f"topology/{name}", mnk_inputs=gemm)
    t.topo_calc_hyperparams()
    layers = []
    for i in range(t.get_num_layers()):
        oh, ow = t.get_layer_ofmap_dims(i)
        layers.append({"name": t.get_layer_name(i), "ofmap": [oh, ow], "macs": t.get_layer_mac_ops(i)})
    out[name] = {"layers": layers, "total_macs": t.get_all_mac_ops()}
with open("topology/scalesim.json", "w") as f:
    json.dump(out, f, indent=1)
print({k: v["total_macs"] for k, v in out.items()})
