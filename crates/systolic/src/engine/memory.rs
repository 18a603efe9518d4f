//! Memory the cycle-accurate engine needs, in bytes, before anything is allocated.
//! The engine's element limits ([`super::MAX_ENGINE_ELEMS`]) bound each matrix; these
//! figures add them up with their element sizes so a caller can hold them against the
//! memory the machine has ([`check_engine_memory`]).

use crate::element::Element;
use crate::error::{Result, SystolicError};
use crate::fold::{fold_count, FoldTiming};
use crate::shape::{ArraySpec, Conv, Dataflow, Gemm};
use std::mem::size_of;

/// `a · b · bytes`, saturating (a saturated figure is refused as too large anyway).
fn bytes_of(elems: u64, per: usize) -> u64 {
    elems.saturating_mul(per as u64)
}

/// Bytes the engine itself allocates at its peak for one GEMM of operand type `E`: the
/// widened, reordered copies of both operands, every column block's results and the
/// assembled product (both M·N accumulators, alive together while assembling), and
/// two timing records per fold (each block's, and the concatenated list). The caller's
/// operands are not counted.
pub fn engine_gemm_bytes<E: Element>(arr: ArraySpec, df: Dataflow, g: Gemm) -> u64 {
    let acc = size_of::<E::Acc>();
    let copies = bytes_of(
        g.m.saturating_mul(g.k)
            .saturating_add(g.k.saturating_mul(g.n)),
        acc,
    );
    let results = bytes_of(g.m.saturating_mul(g.n).saturating_mul(2), acc);
    let folds = bytes_of(
        fold_count(df, arr, g).saturating_mul(2),
        size_of::<FoldTiming>(),
    );
    copies.saturating_add(results).saturating_add(folds)
}

/// Bytes of a whole GEMM run: the operands A (M×K) and W (K×N) of type `E`, what the
/// engine allocates ([`engine_gemm_bytes`]) and, with `reference`, a plain product to
/// compare with (M×N accumulators).
pub fn gemm_run_bytes<E: Element>(arr: ArraySpec, df: Dataflow, g: Gemm, reference: bool) -> u64 {
    let operands = bytes_of(
        g.m.saturating_mul(g.k)
            .saturating_add(g.k.saturating_mul(g.n)),
        size_of::<E>(),
    );
    let product = if reference {
        bytes_of(g.m.saturating_mul(g.n), size_of::<E::Acc>())
    } else {
        0
    };
    operands
        .saturating_add(engine_gemm_bytes::<E>(arr, df, g))
        .saturating_add(product)
}

/// Bytes of a whole convolution run: the input and filter tensors of type `E`, one
/// group's im2col matrix and GEMM weights, the engine's own bytes for that group's GEMM,
/// the output (M × out_c accumulators) and every group's fold records (kept beside the
/// last group's own while they are appended).
pub fn conv_run_bytes<E: Element>(arr: ArraySpec, df: Dataflow, conv: &Conv) -> Result<u64> {
    let g = conv.gemm()?;
    let tensors = bytes_of(
        conv.input_elems().saturating_add(conv.filter_elems()),
        size_of::<E>(),
    );
    let group_gemm = gemm_run_bytes::<E>(arr, df, g, false);
    let output = bytes_of(g.m.saturating_mul(conv.out_c), size_of::<E::Acc>());
    let all_folds = bytes_of(
        fold_count(df, arr, g).saturating_mul(conv.groups),
        size_of::<FoldTiming>(),
    );
    Ok(tensors
        .saturating_add(group_gemm)
        .saturating_add(output)
        .saturating_add(all_folds))
}

/// Refuse a run that needs more than `budget` bytes (what the caller can give it, e.g.
/// a share of the machine's available memory), naming both figures.
pub fn check_engine_memory(needed: u64, budget: u64) -> Result<()> {
    if needed > budget {
        return Err(SystolicError::OutOfMemory { needed, budget });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_cases_count_gigabytes() {
        let arr = ArraySpec::new(64, 64).unwrap();
        let g = Gemm::new(268, 4, 1_000_000).unwrap();
        // i32 operands, i64 accumulators: three M·N products of 2.1 GB each
        let b = gemm_run_bytes::<i32>(arr, Dataflow::Ws, g, true);
        assert!(b > 6_000_000_000 && b < 7_000_000_000, "{b}");
        assert!(check_engine_memory(b, 3 << 30).is_err());
        let small = gemm_run_bytes::<i8>(arr, Dataflow::Ws, Gemm::new(64, 64, 64).unwrap(), true);
        assert!(check_engine_memory(small, 1 << 20).is_ok(), "{small}");
    }

    #[test]
    fn fold_records_count_for_output_stationary() {
        let arr = ArraySpec::new(4, 4).unwrap();
        let g = Gemm::new(1 << 20, 1, 4).unwrap();
        let os = engine_gemm_bytes::<i8>(arr, Dataflow::Os, g);
        let ws = engine_gemm_bytes::<i8>(arr, Dataflow::Ws, g);
        assert_eq!(
            os - ws,
            2 * ((1 << 18) - 1) * size_of::<FoldTiming>() as u64
        );
    }
}
