//! One entry point for the three kinds of MODEL a user can name: a built-in model, the
//! bytes of an `.onnx` file, or the text of a SCALE-Sim topology `.csv`. The caller (the
//! CLI) reads files; this module never does I/O.

use crate::error::{GraphError, Result};
use crate::ir::Graph;

/// Where a network comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelSource<'a> {
    /// A built-in model name (see [`crate::models::list`]).
    Builtin(&'a str),
    /// The bytes of an ONNX file.
    Onnx(&'a [u8]),
    /// The text of a SCALE-Sim topology CSV, and the graph name to give it (file stem).
    Topology {
        /// CSV text.
        text: &'a str,
        /// Graph name.
        name: &'a str,
    },
}

/// Default input resolution (H, W) of built-in models, in pixels.
pub const DEFAULT_RESOLUTION: (u64, u64) = (224, 224);

/// Builds the graph for `source` (unfused; see [`crate::fuse::fuse`]).
/// `batch` defaults to 1 (ONNX: the file's batch, or 1 when symbolic); `resolution`
/// (H, W) defaults to 224×224 for built-ins and the file's sizes for ONNX; a topology CSV
/// fixes its own sizes, so a resolution for it is an error.
pub fn import(
    source: ModelSource<'_>,
    batch: Option<u64>,
    resolution: Option<(u64, u64)>,
) -> Result<Graph> {
    if batch == Some(0) {
        return Err(GraphError::BadOption(
            "batch size must be positive, got 0".into(),
        ));
    }
    if let Some((h, w)) = resolution {
        if h == 0 || w == 0 {
            return Err(GraphError::BadOption(format!(
                "resolution must be positive, got {h}x{w}"
            )));
        }
    }
    match source {
        ModelSource::Builtin(name) => crate::models::build(
            name,
            batch.unwrap_or(1),
            resolution.unwrap_or(DEFAULT_RESOLUTION),
        ),
        ModelSource::Onnx(bytes) => {
            crate::onnx::from_onnx_bytes(bytes, &crate::onnx::OnnxOptions { batch, resolution })
        }
        ModelSource::Topology { text, name } => {
            if let Some((h, w)) = resolution {
                return Err(GraphError::BadOption(format!(
                    "a topology CSV gives every layer's size; resolution {h}x{w} cannot apply"
                )));
            }
            crate::topology::from_topology_csv(text, name, batch.unwrap_or(1))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources() {
        let g = import(ModelSource::Builtin("resnet18"), None, None).unwrap();
        assert_eq!(
            g.tensors[g.inputs[0]].shape,
            crate::Shape4::new(1, 3, 224, 224)
        );
        let csv = "Layer,M,N,K,\ng,4,5,6,\n";
        let g = import(
            ModelSource::Topology {
                text: csv,
                name: "t",
            },
            Some(2),
            None,
        )
        .unwrap();
        assert_eq!(g.name, "t");
        assert_eq!(g.tensors[g.inputs[0]].shape, crate::Shape4::new(2, 6, 4, 1));
        let e = import(
            ModelSource::Topology {
                text: csv,
                name: "t",
            },
            None,
            Some((8, 8)),
        )
        .unwrap_err();
        assert!(e.to_string().contains("resolution 8x8"), "{e}");
        assert!(import(ModelSource::Builtin("vgg16"), Some(0), None).is_err());
        assert!(import(ModelSource::Onnx(b"xx"), None, None).is_err());
    }
}
