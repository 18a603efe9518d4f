//! GatherND and GatherElements: the indexing torch.onnx.export's dynamo exporter
//! writes for the attention masks Hugging Face transformers 5 builds (`GatherND` of
//! the padding mask at each query and key position) and for BERT's buffered token
//! types (`GatherElements`). Shapes are inferred; constant inputs (the masks of a
//! bound batch and sequence) are evaluated, as ONNX defines the ops.

use super::fold::{strides, Val, MAX_FOLD};
use super::infer::{axis, bad, checked, input, one, Out, R};
use super::Work;
use crate::onnx::proto::attr_int;
use onnx_protobuf::NodeProto;

/// `GatherND(data, indices, batch_dims = b)`: rows of `k = indices.dims[-1]` indices
/// into `data`'s dims `b..b+k`, each taking the slice of `data`'s dims after them; the
/// output is `indices.dims[..-1] ++ data.dims[b+k..]`.
pub(super) fn gather_nd(node: &NodeProto, ins: &[Val]) -> R<Out> {
    let data = input(ins, 0)?;
    let idx = input(ins, 1)?;
    let b = usize::try_from(attr_int(node, "batch_dims", 0))
        .map_err(|_| super::infer::Fail::Bad("GatherND batch_dims is negative".into()))?;
    let (Some((&k, rows)), r) = (idx.dims.split_last(), data.dims.len()) else {
        return bad("GatherND indices are a scalar (they need a last dimension)");
    };
    let k = k as usize;
    if b > rows.len() || b + k > r || k == 0 {
        return bad(format!(
            "GatherND of data {:?} by indices {:?} with batch_dims {b}: each index row must name 1 to {} dims",
            data.dims,
            idx.dims,
            r.saturating_sub(b)
        ));
    }
    if data.dims[..b] != idx.dims[..b] {
        return bad(format!(
            "GatherND batch dims differ: data {:?}, indices {:?}",
            &data.dims[..b],
            &idx.dims[..b]
        ));
    }
    let mut dims = rows.to_vec();
    dims.extend_from_slice(&data.dims[b + k..]);
    let n = checked(&dims)? as usize;
    if let (Some(d), Some(i), true) = (&data.konst, &idx.konst, n <= MAX_FOLD) {
        let v = eval_nd(&data.dims, d, i, b, k)?;
        return one(Val::constant(dims, v, data.int), Work::Free);
    }
    one(Val::typed(dims, data.int), Work::Move)
}

fn eval_nd(data_dims: &[u64], data: &[f64], idx: &[f64], b: usize, k: usize) -> R<Vec<f64>> {
    let st = strides(data_dims);
    let batches = checked(&data_dims[..b])? as usize;
    let per_batch = if b == 0 { data.len() } else { st[b - 1] };
    let slice = checked(&data_dims[b + k..])? as usize;
    let rows_per_batch = idx.len() / k / batches.max(1);
    let mut out = Vec::with_capacity(idx.len() / k * slice);
    for (row, tuple) in idx.chunks(k).enumerate() {
        let batch = row / rows_per_batch.max(1);
        let mut at = batch * per_batch;
        for (j, &ix) in tuple.iter().enumerate() {
            at += wrapped(ix, data_dims[b + j])? * st[b + j];
        }
        out.extend_from_slice(data.get(at..at + slice).unwrap_or(&[]));
    }
    Ok(out)
}

/// An index into a dim of `n`, negative from the end.
fn wrapped(ix: f64, n: u64) -> R<usize> {
    let n = n as i64;
    let i = if ix < 0.0 { ix as i64 + n } else { ix as i64 };
    if i < 0 || i >= n {
        return bad(format!("index {ix} is outside a dim of {n}"));
    }
    Ok(i as usize)
}

/// `GatherElements(data, indices, axis)`: the output has `indices`' dims, element `i`
/// taken from `data` at `i` with its `axis` coordinate replaced by `indices[i]`.
pub(super) fn gather_elements(node: &NodeProto, ins: &[Val]) -> R<Out> {
    let data = input(ins, 0)?;
    let idx = input(ins, 1)?;
    if data.dims.len() != idx.dims.len() {
        return bad(format!(
            "GatherElements data {:?} and indices {:?} differ in rank",
            data.dims, idx.dims
        ));
    }
    let a = axis(attr_int(node, "axis", 0), data.dims.len())?;
    let dims = idx.dims.clone();
    if let (Some(d), Some(i)) = (&data.konst, &idx.konst) {
        let v = eval_elements(&data.dims, d, &dims, i, a)?;
        return one(Val::constant(dims, v, data.int), Work::Free);
    }
    one(Val::typed(dims, data.int), Work::Move)
}

fn eval_elements(
    data_dims: &[u64],
    data: &[f64],
    idx_dims: &[u64],
    idx: &[f64],
    a: usize,
) -> R<Vec<f64>> {
    let ds = strides(data_dims);
    let is = strides(idx_dims);
    let mut out = Vec::with_capacity(idx.len());
    for (flat, &ix) in idx.iter().enumerate() {
        let mut at = 0;
        for (d, (&s, &n)) in is.iter().zip(idx_dims).enumerate() {
            let coord = flat / s % n.max(1) as usize;
            let coord = if d == a {
                wrapped(ix, data_dims[a])?
            } else if coord as u64 >= data_dims[d] {
                return bad(format!(
                    "GatherElements indices {idx_dims:?} reach past data {data_dims:?}"
                ));
            } else {
                coord
            };
            at += coord * ds[d];
        }
        out.push(data.get(at).copied().unwrap_or(0.0));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::{eval_elements, eval_nd};

    fn nd(dims: &[u64], data: &[f64], idx: &[f64], b: usize, k: usize) -> Vec<f64> {
        eval_nd(dims, data, idx, b, k).ok().unwrap()
    }

    /// The examples of the ONNX operator documentation (GatherND-13).
    #[test]
    fn gather_nd_matches_the_onnx_examples() {
        let d2 = [0.0, 1.0, 2.0, 3.0];
        assert_eq!(nd(&[2, 2], &d2, &[0.0, 0.0, 1.0, 1.0], 0, 2), [0.0, 3.0]);
        assert_eq!(nd(&[2, 2], &d2, &[1.0, 0.0], 0, 1), [2.0, 3.0, 0.0, 1.0]);
        let d3: Vec<f64> = (0..8).map(f64::from).collect();
        assert_eq!(
            nd(&[2, 2, 2], &d3, &[0.0, 1.0, 1.0, 0.0], 0, 2),
            [2.0, 3.0, 4.0, 5.0]
        );
        assert_eq!(nd(&[2, 2, 2], &d3, &[0.0, 1.0, 1.0, 0.0], 0, 2).len(), 4);
        // batch_dims = 1: each batch's own row
        assert_eq!(nd(&[2, 2, 2], &d3, &[1.0, 0.0], 1, 1), [2.0, 3.0, 4.0, 5.0]);
        // negative indices count from the end
        assert_eq!(nd(&[2, 2], &d2, &[-1.0, -1.0], 0, 2), [3.0]);
        assert!(eval_nd(&[2, 2], &d2, &[2.0, 0.0], 0, 2).is_err());
    }

    /// The examples of the ONNX operator documentation (GatherElements-13).
    #[test]
    fn gather_elements_matches_the_onnx_examples() {
        let got = eval_elements(
            &[2, 2],
            &[1.0, 2.0, 3.0, 4.0],
            &[2, 2],
            &[0.0, 0.0, 1.0, 0.0],
            1,
        );
        assert_eq!(got.ok().unwrap(), [1.0, 1.0, 4.0, 3.0]);
        let data: Vec<f64> = (1..10).map(f64::from).collect();
        let idx = [1.0, 2.0, 0.0, 2.0, 0.0, 0.0];
        let got = eval_elements(&[3, 3], &data, &[2, 3], &idx, 0);
        assert_eq!(got.ok().unwrap(), [4.0, 8.0, 3.0, 7.0, 2.0, 3.0]);
        assert!(eval_elements(&[2, 2], &[1.0; 4], &[2, 2], &[0.0, 2.0, 0.0, 0.0], 1).is_err());
    }
}
