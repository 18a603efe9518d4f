//! Which ops TPU-MLIR 1.30.2 computes in f32 under a 16-bit quantization (F16/BF16): the
//! chip file's `tpu_mlir_f32_ops`, read off TPU-MLIR's lowered MLIR
//! (`*_tpu_opt.mlir`) for the zoo of `bench/tpumlir_zoo.py`. On bm1684x: average
//! pools, Sigmoid, Tanh, SiLU (the `x · sigmoid(x)` TPU-MLIR fuses: `tpu.Active` SILU on
//! f32 tensors, both chips, in the zoo's EfficientNet-like net) and HardSigmoid; on
//! bm1688 the same but HardSigmoid, which it runs in 16 bits. (Global average pools also
//! run in f32 on both; the cost model times those itself, see `cost::pool_store_bits`.)
//!
//! The planner runs the named ops in f32 with explicit casts around them
//! ([`tpusim_graph::cast::cast_wide`]), so their f32 tensors take their room in local
//! memory and the casts their time, and an exported cache names the casts TPU-MLIR
//! inserts.

use tpusim_graph::{Activation, Op, OpKind};
use tpusim_lmem::LmemError;

/// The names `tpu_mlir_f32_ops` may list. `matmul_bias` is not an op but the bias of a
/// matmul with a weight: bm1688 keeps it in f32 under F16 (its lowered MLIR gives
/// gpt2_d320_s80_b2's projections a `tensor<1x1x320xf32>` bias, 5,120 bytes a lane for
/// the FFN's 1,280 in its layer group), bm1684x in f16. `sqrt` and `div` are ONNX's Sqrt
/// and a Div by an activation (one by a constant TPU-MLIR makes a 16-bit `MulConst`):
/// both chips run them in f32, a Sqrt read by such a Div in one f32 run (the RMSNorm
/// Hugging Face's Qwen2, Phi-3 and Gemma 2 export, `1 / sqrt(mean + ε)`: its caches name
/// a cast up before the Sqrt and a cast down after the Div, none between).
pub const F32_OP_NAMES: [&str; 13] = [
    "avgpool",
    "relu",
    "relu6",
    "leaky_relu",
    "sigmoid",
    "tanh",
    "hard_sigmoid",
    "hard_swish",
    "silu",
    "gelu",
    "matmul_bias",
    "sqrt",
    "div",
];

/// A set of op kinds computed in f32 under a 16-bit type.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct F32Ops {
    /// Bit `i` set: [`F32_OP_NAMES`]`[i]` is in the set.
    mask: u32,
}

impl F32Ops {
    /// The set of `names` (each one of [`F32_OP_NAMES`]); `chip` names the chip in the
    /// error.
    pub fn parse(names: &[String], chip: &str) -> tpusim_lmem::Result<F32Ops> {
        let mut mask = 0;
        for n in names {
            let i = F32_OP_NAMES.iter().position(|k| k == n).ok_or_else(|| {
                LmemError::BadChipFile(format!(
                    "chip '{chip}': tpu_mlir_f32_ops lists '{n}', which is none of {}",
                    F32_OP_NAMES.join(", ")
                ))
            })?;
            mask |= 1 << i;
        }
        Ok(F32Ops { mask })
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.mask == 0
    }

    /// Whether `op` computes in f32.
    pub fn runs_in_f32(&self, op: &Op) -> bool {
        kind_name(op).is_some_and(|n| self.holds(n))
    }

    /// Whether an ONNX node of type `op_type` (`Tanh`, `AveragePool`, …; `SiLU` for the
    /// transformer form's fused SiLU) computes in f32.
    pub fn runs_in_f32_onnx(&self, op_type: &str) -> bool {
        onnx_name(op_type).is_some_and(|n| self.holds(n))
    }

    /// Whether a weight matmul's bias is held and moved in f32.
    pub fn matmul_bias(&self) -> bool {
        self.holds("matmul_bias")
    }

    fn holds(&self, name: &str) -> bool {
        F32_OP_NAMES
            .iter()
            .position(|k| *k == name)
            .is_some_and(|i| self.mask & (1 << i) != 0)
    }
}

/// The name [`F32_OP_NAMES`] gives an ONNX op type, if any.
fn onnx_name(op_type: &str) -> Option<&'static str> {
    Some(match op_type {
        "AveragePool" => "avgpool",
        "Relu" => "relu",
        "LeakyRelu" => "leaky_relu",
        "Sigmoid" => "sigmoid",
        "SiLU" => "silu",
        "Tanh" => "tanh",
        "HardSigmoid" => "hard_sigmoid",
        "HardSwish" => "hard_swish",
        "Gelu" => "gelu",
        "Sqrt" => "sqrt",
        "Div" => "div",
        _ => return None,
    })
}

/// The name [`F32_OP_NAMES`] gives `op`'s kind, if any.
fn kind_name(op: &Op) -> Option<&'static str> {
    Some(match &op.kind {
        OpKind::AvgPool(_) => "avgpool",
        OpKind::Act(a) => match a {
            Activation::Relu => "relu",
            Activation::Relu6 => "relu6",
            Activation::LeakyRelu => "leaky_relu",
            Activation::Sigmoid => "sigmoid",
            Activation::Tanh => "tanh",
            Activation::HardSigmoid => "hard_sigmoid",
            Activation::HardSwish => "hard_swish",
            Activation::Silu => "silu",
            Activation::Gelu => "gelu",
        },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tpusim_graph::{GraphBuilder, Shape4};

    #[test]
    fn a_set_holds_what_it_names_and_refuses_an_unknown_name() {
        let mut b = GraphBuilder::new("t");
        let x = b.input("x", Shape4::new(1, 4, 8, 8));
        let s = b.act("s", x, Activation::Sigmoid).unwrap();
        b.act("r", s, Activation::Relu).unwrap();
        let g = b.finish().unwrap();
        let set = F32Ops::parse(&["sigmoid".into(), "avgpool".into()], "c").unwrap();
        assert!(set.runs_in_f32(&g.ops[0]));
        assert!(!set.runs_in_f32(&g.ops[1]));
        assert!(set.runs_in_f32_onnx("Sigmoid") && set.runs_in_f32_onnx("AveragePool"));
        assert!(!set.runs_in_f32_onnx("Tanh") && !set.runs_in_f32_onnx("sigmoid"));
        assert!(F32Ops::default().is_empty());
        let e = F32Ops::parse(&["softmax".into()], "c")
            .unwrap_err()
            .to_string();
        assert!(e.contains("'softmax'") && e.contains("sigmoid"), "{e}");
    }
}
