//! Rematerialisation policies: what a layer keeps for the backward pass
//! (checkpoints, in `D`-wide vectors per token) and what it recomputes.

use crate::error::{bad, Result};
use crate::model::Model;
use serde::Serialize;

/// What each layer saves for the backward pass (MaxText's policy names).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Remat {
    /// Save every intermediate: nothing recomputed.
    None,
    /// Save the matmul outputs; recompute only element-wise work.
    Minimal,
    /// Save each layer's input; recompute the whole forward pass in the backward.
    Full,
    /// Save `c` `D`-wide vectors per token per layer (the book's `c`).
    Checkpoints(f64),
}

impl Remat {
    /// Parse `none`, `minimal`, `full` (MaxText's names; `save_dot_except_mlp`
    /// and `save_qkv_proj` count as minimal).
    pub fn parse(text: &str) -> Result<Remat> {
        Ok(match text.trim().to_ascii_lowercase().as_str() {
            "none" | "nothing" => Remat::None,
            "minimal" | "save_dot_except_mlp" | "save_dot_except_mlpwi" | "save_qkv_proj" => {
                Remat::Minimal
            }
            "full" => Remat::Full,
            _ => {
                return Err(bad(
                    "--remat",
                    text,
                    "use none, minimal or full (or --checkpoints-per-layer C)",
                ))
            }
        })
    }

    /// Checkpoints per layer, in `D`-wide vectors per token.
    pub fn checkpoints(self, m: &Model) -> f64 {
        let d = m.d_model as f64;
        let qkv = ((m.heads + 2 * m.kv_heads) * m.head_dim) as f64 / d;
        let attn_out = (m.heads * m.head_dim) as f64 / d;
        let hidden = (m.mlp_matrices() - 1) as f64 * m.d_ff as f64 / d;
        match self {
            // norms, residuals and the matmul inputs and outputs
            Remat::None => 4.0 + qkv + attn_out + 2.0 * hidden,
            Remat::Minimal => qkv + 2.0 + hidden,
            Remat::Full => 1.0,
            Remat::Checkpoints(c) => c,
        }
    }

    /// FLOPs executed per model FLOP: 4/3 when the forward pass is recomputed
    /// (8·P per token for 6·P counted), else 1.
    pub fn recompute_factor(self, m: &Model) -> f64 {
        if self.checkpoints(m) < Remat::Minimal.checkpoints(m) {
            4.0 / 3.0
        } else {
            1.0
        }
    }

    /// Name as printed.
    pub fn name(self) -> String {
        match self {
            Remat::None => "none".into(),
            Remat::Minimal => "minimal".into(),
            Remat::Full => "full".into(),
            Remat::Checkpoints(c) => format!("{c} checkpoints per layer"),
        }
    }
}
