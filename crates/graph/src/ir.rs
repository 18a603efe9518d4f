//! The network IR: a graph of ops over 4-D (N, C, H, W) tensors, ops in topological
//! order. Weights are tensors too (kind [`TensorKind::Weight`]) so the planner can place
//! them in local memory. Shapes are element counts; the element type is chosen when a
//! network is planned (a network is dtype-agnostic).

use serde::{Deserialize, Serialize};

/// Index of a tensor in [`Graph::tensors`].
pub type TensorId = usize;
/// Index of an op in [`Graph::ops`].
pub type OpId = usize;

/// A 4-D tensor shape in elements: batch `n`, channels `c`, height `h`, width `w`.
/// Matrices (after flatten/gemm) are `n × c` with `h = w = 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Shape4 {
    /// Batch size.
    pub n: u64,
    /// Channels (or features for a matrix).
    pub c: u64,
    /// Height (rows of the feature map).
    pub h: u64,
    /// Width (columns of the feature map).
    pub w: u64,
}

impl Shape4 {
    /// A shape from its four dims.
    pub const fn new(n: u64, c: u64, h: u64, w: u64) -> Self {
        Shape4 { n, c, h, w }
    }

    /// Number of elements, or `None` on u64 overflow.
    pub fn elements(&self) -> Option<u64> {
        self.n
            .checked_mul(self.c)?
            .checked_mul(self.h)?
            .checked_mul(self.w)
    }
}

impl std::fmt::Display for Shape4 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}x{}x{}x{}", self.n, self.c, self.h, self.w)
    }
}

/// What a tensor holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TensorKind {
    /// A network input or an intermediate/output activation.
    Activation,
    /// Constant data (conv filters, biases, batch-norm parameters, gemm weights).
    Weight,
}

/// A tensor of the graph.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tensor {
    /// Unique name (from the model file, or generated).
    pub name: String,
    /// Shape in elements. A conv filter is `(out_channels, in_channels/groups, kh, kw)`;
    /// a bias `(1, c, 1, 1)`; a gemm weight `(k, n, 1, 1)`.
    pub shape: Shape4,
    /// Activation or weight.
    pub kind: TensorKind,
    /// Element width in bits when the model fixes it (a network input that arrives as
    /// f32 ahead of a [`OpKind::Cast`], see [`crate::cast`]); `None` = the element type
    /// the network is planned in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bits: Option<u32>,
}

/// Convolution (and deconvolution) geometry. Padding is `[top, left, bottom, right]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ConvParams {
    /// Kernel height and width.
    pub kernel: [u64; 2],
    /// Stride along H and W.
    pub stride: [u64; 2],
    /// Zero padding: top, left, bottom, right.
    pub pad: [u64; 4],
    /// Dilation along H and W (1 = dense).
    pub dilation: [u64; 2],
    /// Groups (1 = dense conv, = channels for depthwise).
    pub groups: u64,
}

/// Pooling window geometry. Padding is `[top, left, bottom, right]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PoolParams {
    /// Window height and width.
    pub kernel: [u64; 2],
    /// Stride along H and W.
    pub stride: [u64; 2],
    /// Padding: top, left, bottom, right.
    pub pad: [u64; 4],
    /// Output size rounds up instead of down (ONNX `ceil_mode`).
    pub ceil_mode: bool,
    /// An average pool divides every window by its full size, padding included (ONNX
    /// `count_include_pad`); otherwise windows over padding divide by their real
    /// elements. Max pools ignore it.
    #[serde(default)]
    pub count_include_pad: bool,
}

/// An element-wise activation function (standalone op, or fused into the op before it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[allow(missing_docs)]
pub enum Activation {
    Relu,
    Relu6,
    LeakyRelu,
    Sigmoid,
    Tanh,
    HardSigmoid,
    HardSwish,
    Silu,
    Gelu,
}

/// The operation an op performs. Shapes of outputs follow from the inputs and these
/// parameters (see the crate docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum OpKind {
    /// 2-D convolution. Inputs: `[x]`; weights: `[filter]` or `[filter, bias]`.
    Conv(ConvParams),
    /// 2-D transposed convolution (deconvolution); `output_pad` is `[h, w]`.
    Deconv {
        /// Geometry as for a conv (applied in the transposed sense).
        params: ConvParams,
        /// Extra rows/cols added to the output (ONNX `output_padding`).
        output_pad: [u64; 2],
    },
    /// Max pooling.
    MaxPool(PoolParams),
    /// Average pooling.
    AvgPool(PoolParams),
    /// Global average pooling to `n × c × 1 × 1`.
    GlobalAvgPool,
    /// Global max pooling to `n × c × 1 × 1`.
    GlobalMaxPool,
    /// Batch normalisation (inference form: per-channel scale and shift).
    BatchNorm,
    /// An activation function on its own.
    Act(Activation),
    /// Element-wise sum of two inputs of one shape (residual connections).
    Add,
    /// Element-wise product of two inputs of one shape (or a per-channel scale).
    Mul,
    /// Concatenation of the inputs along channels (axis 1; the only axis supported).
    Concat,
    /// Nearest/bilinear upsampling by integer factors along H and W.
    Upsample {
        /// Factor along H.
        scale_h: u64,
        /// Factor along W.
        scale_w: u64,
    },
    /// Fully connected: `y[n, f] = x[n, k] · W[k, f] (+ b)`, input flattened to `n × k`.
    Gemm,
    /// Flatten to `n × (c·h·w) × 1 × 1`.
    Flatten,
    /// Reshape to the op's output shape (element count unchanged).
    Reshape,
    /// Element-type conversion, shape unchanged: the input has the element width the
    /// model fixes ([`Tensor::bits`]), the output the network's (TPU-MLIR inserts one
    /// after an f32 network input when it compiles for F16/BF16).
    Cast,
}

impl OpKind {
    /// Short lower-case name of the op type (`conv`, `maxpool`, `add`, …) for tables.
    pub fn name(&self) -> &'static str {
        match self {
            OpKind::Conv(_) => "conv",
            OpKind::Deconv { .. } => "deconv",
            OpKind::MaxPool(_) => "maxpool",
            OpKind::AvgPool(_) => "avgpool",
            OpKind::GlobalAvgPool => "global_avgpool",
            OpKind::GlobalMaxPool => "global_maxpool",
            OpKind::BatchNorm => "batchnorm",
            OpKind::Act(_) => "activation",
            OpKind::Add => "add",
            OpKind::Mul => "mul",
            OpKind::Concat => "concat",
            OpKind::Upsample { .. } => "upsample",
            OpKind::Gemm => "gemm",
            OpKind::Flatten => "flatten",
            OpKind::Reshape => "reshape",
            OpKind::Cast => "cast",
        }
    }
}

/// One op of the graph.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Op {
    /// Unique name.
    pub name: String,
    /// What it computes.
    pub kind: OpKind,
    /// Activation inputs, in order.
    pub inputs: Vec<TensorId>,
    /// Weight inputs (filters, biases, BN parameters), in order.
    pub weights: Vec<TensorId>,
    /// Outputs (one for every op kind above).
    pub outputs: Vec<TensorId>,
    /// An activation fused into this op (after batch-norm folding), applied to its output.
    pub fused_act: Option<Activation>,
    /// The source file's op type where the kind does not say it: an ONNX `MatMul` read
    /// as a [`OpKind::Gemm`], an `Upsample` as an [`OpKind::Upsample`] (TPU-MLIR names
    /// ops after it). `None` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_type: Option<String>,
}

impl Op {
    /// An element-wise op of two different inputs (add, multiply): each output element
    /// depends only on the same element of the inputs, so its output may be written
    /// over its first input (TPU-MLIR's local-memory allocator does so, "in place").
    pub fn is_binary_elementwise(&self) -> bool {
        matches!(self.kind, OpKind::Add | OpKind::Mul)
            && self.inputs.len() == 2
            && self.inputs[0] != self.inputs[1]
            && self.outputs.len() == 1
    }
}

/// A network: tensors and ops, ops in a valid topological order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Graph {
    /// Model name (built-in name or file stem).
    pub name: String,
    /// All tensors; [`TensorId`]s index this list.
    pub tensors: Vec<Tensor>,
    /// All ops in topological order; [`OpId`]s index this list.
    pub ops: Vec<Op>,
    /// The network's inputs.
    pub inputs: Vec<TensorId>,
    /// The network's outputs.
    pub outputs: Vec<TensorId>,
}
