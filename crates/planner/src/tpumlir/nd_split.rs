//! The names TPU-MLIR 1.30.2 gives a weight matmul whose output (its bias added) a Split,
//! or Slices, cut into columns (GPT-2's fused QKV projection). Two of its rewrites make one matmul
//! a piece, and they name the pieces differently:
//! - When every piece is at least 128 columns wide, `model_transform` already writes one
//!   `top.MatMul` a piece, each named after its piece (`split_28_0_Split`, and its weight
//!   `h.0.c_attn.w__offset256`). Read off `model_transform` of generated graphs: GPT-2
//!   blocks of d_model 64 to 384 and bare MatMul → Add → Split graphs of pieces 64 to
//!   1,000 wide (`[128, 256]` and `[130, 300]` are cut at the top, `[127, 129]`,
//!   `[200, 100]` and `[96; 3]` are not).
//! - Otherwise the pieces stay `top.Slice`s, and the bm1684x-family lowering's
//!   `SplitMatMulPattern` makes one matmul a slice, named after the matmul
//!   (`add_26_0_Add`, the bias Add's name once it is fused) and a count:
//!   `<matmul>_matmul_<id>`, the count going up by one a piece. A slice whose one reader
//!   is a Reshape or Squeeze has that view rebuilt as `<matmul>_reshape_<id>`, and the
//!   count goes up once more: gpt2_d96_s24_b3's pieces are `add_26_0_Add_matmul_1`, `_3`
//!   and `_5`, their Reshapes `add_26_0_Add_reshape_1`, `_3` and `_5`. A cache that names
//!   the pieces any other way is refused ("operand #0 does not dominate this use").

/// The narrowest piece `model_transform` cuts into a matmul of its own.
pub(super) const TOP_SPLIT_MIN_COLUMNS: u64 = 128;

/// One piece of the split, as the graph has it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Piece<'a> {
    /// The value it is (the Split's output).
    pub value: &'a str,
    /// Its columns: the matmul's columns it takes.
    pub columns: u64,
    /// What the view reading it writes, when a Reshape or Squeeze is its one reader.
    pub view_output: Option<&'a str>,
}

/// TPU-MLIR's names for one piece.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct PieceNames {
    /// The matmul computing it.
    pub matmul: String,
    /// The view reading it, where TPU-MLIR renames it.
    pub view: Option<RenamedView>,
}

/// A view TPU-MLIR names other than `<output>_<type>`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct RenamedView {
    /// The value the view writes.
    pub output: String,
    /// TPU-MLIR's name of it.
    pub loc: String,
}

/// Whether `model_transform` cuts the matmul into `pieces` (each wide enough), rather
/// than the lowering. The two leave the pieces in opposite orders: TPU-MLIR's op order
/// (latest ready first) runs the top's pieces first to last (Q, K, then Q·Kᵀ before V),
/// the lowering's last to first, all three before Q·Kᵀ (gpt2_d96_s24_b3's cache: V's
/// `add_26_0_Add_matmul_5` first; a group listing Q·Kᵀ between K and V is refused).
pub(super) fn cut_at_top(pieces: &[Piece]) -> bool {
    pieces.iter().all(|p| p.columns >= TOP_SPLIT_MIN_COLUMNS)
}

/// The names of `pieces` (in the cut's order) of the matmul TPU-MLIR names `matmul_loc`,
/// cut by a `cutter` op ("Split", or the "Slice"s an exporter wrote: Phi-3's fused QKV
/// and gate-up projections, `qkv[..., :q_end]`, …) at the top (`at_top`: each piece
/// named after its value and the cutter's type) or by the lowering. Slices follow
/// the Split's rule: hf_phi3's pieces of 32, 16 and 16 columns are the lowering's,
/// `…/qkv_proj/MatMul_output_0_MatMul_matmul_1`, `_3` and `_5`, its gate and up halves
/// `_matmul_1` and `_2`; hf_phi3_d96_s64's gate and up halves of 192 columns are cut at
/// the top, `…/mlp/Slice_output_0_Slice` and `…/mlp/Slice_1_output_0_Slice` (its
/// TPU-MLIR cache; named as the lowering names them, our export did not compile).
pub(super) fn names_where_cut(
    matmul_loc: &str,
    pieces: &[Piece],
    at_top: bool,
    cutter: &str,
) -> Vec<PieceNames> {
    if at_top {
        return pieces
            .iter()
            .map(|p| PieceNames {
                matmul: format!("{}_{cutter}", p.value),
                view: None,
            })
            .collect();
    }
    let mut id = 0u32;
    pieces
        .iter()
        .map(|p| {
            id += 1;
            let matmul = format!("{matmul_loc}_matmul_{id}");
            let view = p.view_output.map(|output| RenamedView {
                output: output.to_string(),
                loc: format!("{matmul_loc}_reshape_{id}"),
            });
            if view.is_some() {
                id += 1;
            }
            PieceNames { matmul, view }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece<'a>(value: &'a str, columns: u64, view: Option<&'a str>) -> Piece<'a> {
        Piece {
            value,
            columns,
            view_output: view,
        }
    }

    #[test]
    fn wide_pieces_are_named_after_themselves() {
        let p = [
            piece("split_28_0", 256, Some("reshape_32_0")),
            piece("split_28_1", 128, None),
        ];
        let names = names_where_cut("add_26_0_Add", &p, cut_at_top(&p), "Split");
        assert_eq!(names[0].matmul, "split_28_0_Split");
        assert_eq!(names[1].matmul, "split_28_1_Split");
        assert!(names.iter().all(|n| n.view.is_none()));
    }

    #[test]
    fn narrow_pieces_count_their_views_too() {
        // gpt2_d96_s24_b3's cache on bm1684x and bm1688
        let p = [
            piece("split_28_0", 96, Some("reshape_32_0")),
            piece("split_28_1", 96, Some("reshape_37_0")),
            piece("split_28_2", 96, Some("reshape_42_0")),
        ];
        let names = names_where_cut("add_26_0_Add", &p, cut_at_top(&p), "Split");
        let matmuls: Vec<&str> = names.iter().map(|n| n.matmul.as_str()).collect();
        assert_eq!(
            matmuls,
            [
                "add_26_0_Add_matmul_1",
                "add_26_0_Add_matmul_3",
                "add_26_0_Add_matmul_5"
            ]
        );
        let view = names[2].view.as_ref().unwrap();
        assert_eq!(
            (view.output.as_str(), view.loc.as_str()),
            ("reshape_42_0", "add_26_0_Add_reshape_5")
        );
    }

    #[test]
    fn one_narrow_piece_keeps_them_all_slices() {
        let p = [piece("a", 127, None), piece("b", 129, None)];
        let names = names_where_cut("mm", &p, cut_at_top(&p), "Split");
        assert_eq!(names[0].matmul, "mm_matmul_1");
        assert_eq!(names[1].matmul, "mm_matmul_2");
    }

    #[test]
    fn wide_slices_are_named_after_themselves() {
        // hf_phi3_d96_s64's gate and up halves, 192 columns each, in TPU-MLIR's cache
        let p = [
            piece("/model/model/layers.0/mlp/Slice_output_0", 192, None),
            piece("/model/model/layers.0/mlp/Slice_1_output_0", 192, None),
        ];
        let names = names_where_cut("mm", &p, cut_at_top(&p), "Slice");
        assert_eq!(
            names[0].matmul,
            "/model/model/layers.0/mlp/Slice_output_0_Slice"
        );
        assert_eq!(
            names[1].matmul,
            "/model/model/layers.0/mlp/Slice_1_output_0_Slice"
        );
    }
}
