//! An ONNX model's bytes without its weights: the protobuf re-encoded with every
//! large initializer's `raw_data` left out (its dims, type and name kept), so that
//! importing a transformer touches only the graph. With the file memory-mapped, the
//! weights' pages are never read.

/// `raw_data` fields longer than this are dropped (shape constants are far smaller).
const KEEP_RAW: usize = 1024;

/// ModelProto.graph, GraphProto.initializer, TensorProto.raw_data.
const MODEL_GRAPH: u64 = 7;
const GRAPH_INITIALIZER: u64 = 5;
const TENSOR_RAW_DATA: u64 = 9;

fn varint(b: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*at)?;
        *at += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Which nested message a field is, for the walk.
#[derive(Clone, Copy, PartialEq)]
enum Level {
    Model,
    Graph,
    Tensor,
}

fn walk(b: &[u8], level: Level, out: &mut Vec<u8>) -> Option<()> {
    let mut at = 0usize;
    while at < b.len() {
        let key_start = at;
        let key = varint(b, &mut at)?;
        let (field, wire) = (key >> 3, key & 7);
        match wire {
            0 => {
                varint(b, &mut at)?;
            }
            1 => at = at.checked_add(8)?,
            5 => at = at.checked_add(4)?,
            2 => {
                let len = usize::try_from(varint(b, &mut at)?).ok()?;
                let body_start = at;
                let end = at.checked_add(len)?;
                let body = b.get(body_start..end)?;
                at = end;
                let inner = match (level, field) {
                    (Level::Model, MODEL_GRAPH) => Some(Level::Graph),
                    (Level::Graph, GRAPH_INITIALIZER) => Some(Level::Tensor),
                    _ => None,
                };
                if let Some(inner) = inner {
                    let mut sub = Vec::new();
                    walk(body, inner, &mut sub)?;
                    put_varint(out, key);
                    put_varint(out, sub.len() as u64);
                    out.extend_from_slice(&sub);
                    continue;
                }
                if level == Level::Tensor && field == TENSOR_RAW_DATA && len > KEEP_RAW {
                    continue;
                }
            }
            _ => return None,
        }
        out.extend_from_slice(b.get(key_start..at)?);
    }
    (at == b.len()).then_some(())
}

/// The model without its large initializers' data; `None` when the bytes are not a
/// well-formed protobuf (the importer then reports what is wrong with them).
pub fn slim_onnx(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(bytes.len().min(1 << 20));
    walk(bytes, Level::Model, &mut out)?;
    Some(out)
}
