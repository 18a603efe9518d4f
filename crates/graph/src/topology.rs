//! SCALE-Sim topology CSV import → a chain graph.
//!
//! Two formats, told apart by the header:
//! - **conv**: `Layer name,IFMAP Height,IFMAP Width,Filter Height,Filter Width,Channels,
//!   Num Filter,Strides,` (an optional 9th sparsity column `N:M` is ignored). There is no
//!   padding column: the IFMAP size is given already padded, and the output is
//!   `(H − F) / S + 1` (SCALE-Sim's `ceil((H − F + S) / S)`). A layer name containing
//!   `DP` is depthwise: `groups = Channels`, `Num Filter` filters per channel (SCALE-Sim
//!   runs one single-channel layer per channel), so `Channels × Num Filter` outputs.
//! - **gemm**: `Layer,M,N,K,`: an `M×K` by `K×N` product, imported as a 1×1 conv over an
//!   input of `K` channels and `M` rows (`batch × K × M × 1` → `batch × N × M × 1`), so a
//!   planner can slice it along H (= M).
//!
//! Chaining (conv rows only; every GEMM row is an independent layer with its own input
//! `<layer>.input`, as SCALE-Sim and `tpusim systolic run` take them): a layer reads the
//! previous layer's output when its channels match and the
//! CSV's (padded) size exceeds the previous output by less than the kernel in each
//! direction — that difference becomes symmetric zero padding (extra row/column at the
//! bottom/right). Otherwise (pooling or other layers the CSV leaves out) the layer reads a
//! fresh graph input `<layer>.input` of the CSV's size, unpadded. Every output nobody reads
//! is a graph output.

use crate::builder::GraphBuilder;
use crate::error::{GraphError, Result};
use crate::ir::{ConvParams, Graph, Shape4, TensorId};

/// One parsed layer (all sizes in elements).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Layer {
    name: String,
    line: usize,
    /// Input channels, padded height and width.
    c: u64,
    h: u64,
    w: u64,
    kh: u64,
    kw: u64,
    filters: u64,
    stride: u64,
    depthwise: bool,
    /// A GEMM row: an independent layer, never chained to the row before.
    gemm: bool,
}

fn field(fields: &[&str], i: usize, line: usize, what: &str) -> Result<u64> {
    let raw = fields.get(i).map(|s| s.trim()).unwrap_or("");
    match raw.parse::<u64>() {
        Ok(v) if v > 0 => Ok(v),
        _ => Err(GraphError::Topology {
            line,
            reason: format!("{what} must be a positive integer, got '{raw}'"),
        }),
    }
}

fn parse(text: &str) -> Result<Vec<Layer>> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty());
    let Some((hl, header)) = lines.next() else {
        return Err(GraphError::Topology {
            line: 1,
            reason: "empty file (expected a SCALE-Sim topology header)".into(),
        });
    };
    let head: Vec<String> = header
        .split(',')
        .map(|s| s.trim().to_ascii_lowercase())
        .filter(|s| !s.is_empty())
        .collect();
    let gemm = head.len() >= 4 && head[0] == "layer" && head[1..4] == ["m", "n", "k"];
    let conv = head.len() >= 8 && head[0] == "layer name" && head[1].starts_with("ifmap");
    if !gemm && !conv {
        return Err(GraphError::Topology {
            line: hl,
            reason: format!(
                "unknown header '{header}' (expected 'Layer name,IFMAP Height,IFMAP Width,Filter Height,Filter Width,Channels,Num Filter,Strides,' or 'Layer,M,N,K,')"
            ),
        });
    }
    let mut out = Vec::new();
    for (line, l) in lines {
        let mut fields: Vec<&str> = l.split(',').collect();
        if fields.last().is_some_and(|f| f.trim().is_empty()) {
            fields.pop();
        }
        let name = fields.first().map(|s| s.trim()).unwrap_or("");
        if name.is_empty() {
            return Err(GraphError::Topology {
                line,
                reason: "empty layer name".into(),
            });
        }
        let (want, max) = if gemm { (4, 5) } else { (8, 9) };
        if fields.len() < want || fields.len() > max {
            return Err(GraphError::Topology {
                line,
                reason: format!(
                    "layer '{name}' has {} fields, expected {want}",
                    fields.len()
                ),
            });
        }
        let layer = if gemm {
            let (m, n, k) = (
                field(&fields, 1, line, "M")?,
                field(&fields, 2, line, "N")?,
                field(&fields, 3, line, "K")?,
            );
            Layer {
                name: name.into(),
                line,
                c: k,
                h: m,
                w: 1,
                kh: 1,
                kw: 1,
                filters: n,
                stride: 1,
                depthwise: false,
                gemm: true,
            }
        } else {
            let l = Layer {
                name: name.into(),
                line,
                h: field(&fields, 1, line, "IFMAP Height")?,
                w: field(&fields, 2, line, "IFMAP Width")?,
                kh: field(&fields, 3, line, "Filter Height")?,
                kw: field(&fields, 4, line, "Filter Width")?,
                c: field(&fields, 5, line, "Channels")?,
                filters: field(&fields, 6, line, "Num Filter")?,
                stride: field(&fields, 7, line, "Strides")?,
                depthwise: name.contains("DP"),
                gemm: false,
            };
            if l.kh > l.h || l.kw > l.w {
                return Err(GraphError::Topology {
                    line,
                    reason: format!(
                        "layer '{name}': filter {}x{} larger than IFMAP {}x{}",
                        l.kh, l.kw, l.h, l.w
                    ),
                });
            }
            l
        };
        out.push(layer);
    }
    if out.is_empty() {
        return Err(GraphError::Topology {
            line: hl,
            reason: "no layers after the header".into(),
        });
    }
    Ok(out)
}

/// Imports a SCALE-Sim topology CSV (`text`) as a chain graph named `name` with batch
/// `batch` (SCALE-Sim itself has no batch; use 1 to match it).
pub fn from_topology_csv(text: &str, name: &str, batch: u64) -> Result<Graph> {
    if batch == 0 {
        return Err(GraphError::BadOption(
            "batch size must be positive, got 0".into(),
        ));
    }
    let layers = parse(text)?;
    let mut b = GraphBuilder::new(name);
    let mut prev: Option<TensorId> = None;
    let mut consumed = Vec::new();
    let mut outs = Vec::new();
    for l in &layers {
        let ctx = |e: GraphError| match e {
            GraphError::Shape { reason, .. } => GraphError::Topology {
                line: l.line,
                reason: format!("layer '{}': {reason}", l.name),
            },
            other => other,
        };
        // GEMM rows are independent layers, as SCALE-Sim runs them: chaining one into
        // the next would let the 1×1-conv merge fold `fc1` and `fc2` into one layer
        let chained = prev.filter(|_| !l.gemm).and_then(|p| {
            let s = b.shape(p);
            let ok = s.n == batch
                && s.c == l.c
                && s.h <= l.h
                && s.w <= l.w
                && l.h - s.h < l.kh
                && l.w - s.w < l.kw;
            ok.then_some((p, s))
        });
        let (x, pad) = match chained {
            Some((p, s)) => {
                consumed.push(p);
                let (ph, pw) = (l.h - s.h, l.w - s.w);
                (p, [ph / 2, pw / 2, ph - ph / 2, pw - pw / 2])
            }
            None => (
                b.input(
                    &format!("{}.input", l.name),
                    Shape4::new(batch, l.c, l.h, l.w),
                ),
                [0; 4],
            ),
        };
        let (groups, c_out) = if l.depthwise {
            let c_out =
                l.c.checked_mul(l.filters)
                    .ok_or_else(|| GraphError::Topology {
                        line: l.line,
                        reason: format!("layer '{}': channels × filters overflows", l.name),
                    })?;
            (l.c, c_out)
        } else {
            (1, l.filters)
        };
        let p = ConvParams {
            kernel: [l.kh, l.kw],
            stride: [l.stride, l.stride],
            pad,
            dilation: [1, 1],
            groups,
        };
        let y = b.conv_with(&l.name, x, c_out, p, false).map_err(ctx)?;
        outs.push(y);
        prev = Some(y);
    }
    for y in outs {
        if !consumed.contains(&y) {
            b.output(y);
        }
    }
    b.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::graph_cost;
    use crate::ir::OpKind;

    #[test]
    fn conv_topology_chains_and_pads() {
        // 3x3 s1 on a 56-padded-to-58 input chains; a size jump (pooling omitted) does not.
        let csv = "Layer name,IFMAP Height,IFMAP Width,Filter Height,Filter Width,Channels,Num Filter,Strides,\n\
                   conv1,230,230,7,7,3,64,2,\n\
                   conv2,114,114,3,3,64,64,1,\n\
                   conv3,58,58,3,3,64,64,1,\n\
                   DP4,58,58,3,3,64,1,1,\n";
        let g = from_topology_csv(csv, "t", 1).unwrap();
        assert_eq!(g.ops.len(), 4);
        assert_eq!(
            g.inputs.len(),
            2,
            "conv3 starts a new input (112 → 58 is a pool the CSV omits)"
        );
        assert_eq!(
            g.tensors[g.ops[0].outputs[0]].shape,
            Shape4::new(1, 64, 112, 112)
        );
        let OpKind::Conv(p) = g.ops[1].kind else {
            panic!()
        };
        assert_eq!(p.pad, [1, 1, 1, 1]);
        let OpKind::Conv(p) = g.ops[3].kind else {
            panic!()
        };
        assert_eq!(p.groups, 64);
        assert_eq!(
            g.tensors[g.ops[3].outputs[0]].shape,
            Shape4::new(1, 64, 56, 56)
        );
        assert_eq!(g.outputs.len(), 2); // conv2 (not read by conv3) and DP4
                                        // MACs = output elements × (C/groups) × kh × kw, as SCALE-Sim counts them.
        let macs = graph_cost(&g).unwrap().macs;
        assert_eq!(
            macs,
            64 * 112 * 112 * 3 * 49
                + 64 * 112 * 112 * 64 * 9
                + 64 * 56 * 56 * 64 * 9
                + 64 * 56 * 56 * 9
        );
    }

    #[test]
    fn scalesim_output_size_rule() {
        // SCALE-Sim: ofmap = ceil((H - F + S) / S); 9x9, F3, S2 → 4.
        let csv = "Layer name,IFMAP Height,IFMAP Width,Filter Height,Filter Width,Channels,Num Filter,Strides,\nc2,9,9,3,3,4,6,2,\n";
        let g = from_topology_csv(csv, "t", 2).unwrap();
        assert_eq!(g.tensors[g.outputs[0]].shape, Shape4::new(2, 6, 4, 4));
    }

    #[test]
    fn gemm_topology() {
        let csv = "Layer,M,N,K,\ng1,30,20,19,\ng2,30,8,20,\ng3,16,8,8,\n";
        let g = from_topology_csv(csv, "t", 1).unwrap();
        // every row is its own layer, even g2 whose K matches g1's N
        assert_eq!(g.inputs.len(), 3);
        assert_eq!(g.outputs.len(), 3);
        assert_eq!(
            g.tensors[g.ops[1].outputs[0]].shape,
            Shape4::new(1, 8, 30, 1)
        );
        assert_eq!(
            graph_cost(&g).unwrap().macs,
            30 * 20 * 19 + 30 * 8 * 20 + 16 * 8 * 8
        );
        // and stay so after fusion: an MLP's up and down projections are not merged
        let csv = "Layer,M,N,K,\nfc1,2048,14336,4096,\nfc2,2048,4096,14336,\n";
        let g = crate::fuse::fuse(&from_topology_csv(csv, "mlp", 1).unwrap()).unwrap();
        assert_eq!(g.ops.len(), 2);
        assert_eq!(
            graph_cost(&g).unwrap().macs,
            2048 * 14336 * 4096 + 2048 * 4096 * 14336
        );
    }

    #[test]
    fn errors_name_line_and_field() {
        let h = "Layer name,IFMAP Height,IFMAP Width,Filter Height,Filter Width,Channels,Num Filter,Strides,\n";
        let e = from_topology_csv(&format!("{h}c1,10,x,3,3,3,8,1,\n"), "t", 1)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "topology CSV line 2: IFMAP Width must be a positive integer, got 'x'"
        );
        let e = from_topology_csv(&format!("{h}c1,10,10,3,3,3,8,\n"), "t", 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("7 fields"), "{e}");
        let e = from_topology_csv(&format!("{h}c1,2,10,3,3,3,8,1,\n"), "t", 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("larger than IFMAP"), "{e}");
        assert!(from_topology_csv("a,b,c\n1,2,3\n", "t", 1)
            .unwrap_err()
            .to_string()
            .contains("unknown header"));
        assert!(from_topology_csv("", "t", 1).is_err());
        assert!(from_topology_csv(h, "t", 1)
            .unwrap_err()
            .to_string()
            .contains("no layers"));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]
        /// Any text gives an error or a valid graph, never a panic.
        #[test]
        fn arbitrary_rows_never_panic(rows in proptest::collection::vec(proptest::collection::vec(0u64..40, 7), 1..5)) {
            let mut csv = String::from("Layer name,IFMAP Height,IFMAP Width,Filter Height,Filter Width,Channels,Num Filter,Strides,\n");
            for (i, r) in rows.iter().enumerate() {
                let name = if i % 2 == 1 { "DP" } else { "L" };
                csv.push_str(&format!("{name}{i},{},{},{},{},{},{},{},\n", r[0], r[1], r[2], r[3], r[4], r[5], r[6]));
            }
            if let Ok(g) = from_topology_csv(&csv, "t", 1) {
                proptest::prop_assert!(crate::validate::validate(&g).is_ok());
            }
        }
    }
}
