//! Small hand-built networks for tests, examples and benchmarks of the planner (the
//! real model zoo lives in the graph crate). Each is a valid [`Graph`] in topological
//! order.

use tpusim_graph::{
    Activation, ConvParams, Graph, Op, OpKind, PoolParams, Shape4, Tensor, TensorKind,
};

/// Incremental builder used by the test networks.
struct B {
    g: Graph,
}

impl B {
    fn new(name: &str, input: Shape4) -> (B, usize) {
        let mut g = Graph {
            name: name.into(),
            ..Default::default()
        };
        g.tensors.push(Tensor {
            name: "input".into(),
            shape: input,
            kind: TensorKind::Activation,
            bits: None,
        });
        g.inputs.push(0);
        (B { g }, 0)
    }

    fn tensor(&mut self, name: String, shape: Shape4, kind: TensorKind) -> usize {
        self.g.tensors.push(Tensor {
            name,
            shape,
            kind,
            bits: None,
        });
        self.g.tensors.len() - 1
    }

    fn op(
        &mut self,
        name: &str,
        kind: OpKind,
        inputs: Vec<usize>,
        weights: Vec<usize>,
        out: Shape4,
        act: Option<Activation>,
    ) -> usize {
        let y = self.tensor(format!("{name}_out"), out, TensorKind::Activation);
        self.g.ops.push(Op {
            name: name.into(),
            kind,
            inputs,
            weights,
            outputs: vec![y],
            fused_act: act,
            source_type: None,
        });
        y
    }

    fn shape(&self, t: usize) -> Shape4 {
        self.g.tensors[t].shape
    }

    fn conv(&mut self, name: &str, x: usize, oc: u64, k: u64, s: u64, relu: bool) -> usize {
        let xs = self.shape(x);
        let p = k / 2;
        let oh = (xs.h + 2 * p - k) / s + 1;
        let ow = (xs.w + 2 * p - k) / s + 1;
        let w = self.tensor(
            format!("{name}_w"),
            Shape4::new(oc, xs.c, k, k),
            TensorKind::Weight,
        );
        let b = self.tensor(
            format!("{name}_b"),
            Shape4::new(1, oc, 1, 1),
            TensorKind::Weight,
        );
        let cp = ConvParams {
            kernel: [k, k],
            stride: [s, s],
            pad: [p, p, p, p],
            dilation: [1, 1],
            groups: 1,
        };
        self.op(
            name,
            OpKind::Conv(cp),
            vec![x],
            vec![w, b],
            Shape4::new(xs.n, oc, oh, ow),
            relu.then_some(Activation::Relu),
        )
    }

    fn finish(mut self, out: usize) -> Graph {
        self.g.outputs.push(out);
        self.g
    }
}

/// `layers` 3×3 stride-1 convs with ReLU on an `n × c × h × h` input, `c` channels
/// throughout.
pub fn conv_chain(n: u64, c: u64, h: u64, layers: usize) -> Graph {
    let (mut b, mut x) = B::new("conv_chain", Shape4::new(n, c, h, h));
    for i in 0..layers {
        x = b.conv(&format!("conv{i}"), x, c, 3, 1, true);
    }
    b.finish(x)
}

/// A small residual network: stem conv 7×7/2, max pool 3×3/2, `blocks` basic residual
/// blocks (conv-conv-add, ReLU), a deconv ×2, an upsample ×2, global average pool,
/// flatten and gemm — every op kind the planner places or keeps global.
pub fn mini_resnet(n: u64, c: u64, h: u64, blocks: usize) -> Graph {
    let (mut b, x0) = B::new("mini_resnet", Shape4::new(n, 3, h, h));
    let x = b.conv("stem", x0, c, 7, 2, true);
    let s = b.shape(x);
    let pp = PoolParams {
        kernel: [3, 3],
        stride: [2, 2],
        pad: [1, 1, 1, 1],
        ceil_mode: false,
        count_include_pad: false,
    };
    let mut x = b.op(
        "pool",
        OpKind::MaxPool(pp),
        vec![x],
        vec![],
        Shape4::new(s.n, s.c, (s.h + 2 - 3) / 2 + 1, (s.w + 2 - 3) / 2 + 1),
        None,
    );
    for i in 0..blocks {
        let a = b.conv(&format!("b{i}_conv1"), x, c, 3, 1, true);
        let a = b.conv(&format!("b{i}_conv2"), a, c, 3, 1, false);
        let sh = b.shape(a);
        x = b.op(
            &format!("b{i}_add"),
            OpKind::Add,
            vec![x, a],
            vec![],
            sh,
            Some(Activation::Relu),
        );
    }
    let s = b.shape(x);
    let dw = b.tensor(
        "deconv_w".into(),
        Shape4::new(c, c, 2, 2),
        TensorKind::Weight,
    );
    let dp = ConvParams {
        kernel: [2, 2],
        stride: [2, 2],
        pad: [0, 0, 0, 0],
        dilation: [1, 1],
        groups: 1,
    };
    let d = b.op(
        "deconv",
        OpKind::Deconv {
            params: dp,
            output_pad: [0, 0],
        },
        vec![x],
        vec![dw],
        Shape4::new(s.n, c, s.h * 2, s.w * 2),
        None,
    );
    let bn_w = b.tensor(
        "bn_scale".into(),
        Shape4::new(1, c, 1, 1),
        TensorKind::Weight,
    );
    let bn_b = b.tensor(
        "bn_shift".into(),
        Shape4::new(1, c, 1, 1),
        TensorKind::Weight,
    );
    let d = b.op(
        "bn",
        OpKind::BatchNorm,
        vec![d],
        vec![bn_w, bn_b],
        Shape4::new(s.n, c, s.h * 2, s.w * 2),
        None,
    );
    let u = b.op(
        "up",
        OpKind::Upsample {
            scale_h: 2,
            scale_w: 2,
        },
        vec![d],
        vec![],
        Shape4::new(s.n, c, s.h * 4, s.w * 4),
        None,
    );
    let ap = PoolParams {
        kernel: [4, 4],
        stride: [4, 4],
        pad: [0, 0, 0, 0],
        ceil_mode: false,
        count_include_pad: false,
    };
    let p = b.op(
        "avg",
        OpKind::AvgPool(ap),
        vec![u],
        vec![],
        Shape4::new(s.n, c, s.h, s.w),
        None,
    );
    let cat = b.op(
        "cat",
        OpKind::Concat,
        vec![p, x],
        vec![],
        Shape4::new(s.n, 2 * c, s.h, s.w),
        None,
    );
    let g = b.op(
        "gap",
        OpKind::GlobalAvgPool,
        vec![cat],
        vec![],
        Shape4::new(s.n, 2 * c, 1, 1),
        None,
    );
    let f = b.op(
        "flatten",
        OpKind::Flatten,
        vec![g],
        vec![],
        Shape4::new(s.n, 2 * c, 1, 1),
        None,
    );
    let fw = b.tensor(
        "fc_w".into(),
        Shape4::new(2 * c, 10, 1, 1),
        TensorKind::Weight,
    );
    let y = b.op(
        "fc",
        OpKind::Gemm,
        vec![f],
        vec![fw],
        Shape4::new(s.n, 10, 1, 1),
        None,
    );
    b.finish(y)
}
