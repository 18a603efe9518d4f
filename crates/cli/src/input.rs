//! Input files, read with a bound per format: a file larger than its format can need
//! (or a stream such as `/dev/zero`) is refused after at most that many bytes, with an
//! error that names the file, the format and the limit.

use anyhow::{bail, Context, Result};
use std::io::Read;
use std::path::Path;
use tpusim_report::{ModelArg, ModelSource};

/// The formats tpusim reads from files, each with the most bytes it can need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// An ONNX model: protobuf's own 2 GiB message limit.
    Onnx,
    /// A SCALE-Sim config (.cfg).
    ScaleSimConfig,
    /// A SCALE-Sim topology CSV.
    Topology,
    /// A SCALE-Sim 3 layout CSV (`systolic run --layout`).
    ScaleSimLayout,
    /// A chip or NPU preset TOML.
    ChipToml,
    /// A sweep TOML.
    SweepToml,
    /// A TPU-MLIR layer-group cache JSON.
    TpuMlirCache,
    /// A plan JSON (`tpusim plan --json`).
    PlanJson,
    /// An HLO text dump.
    Hlo,
    /// A model file for `tpusim llm` (Hugging Face `config.json`).
    ModelJson,
    /// Measurements for `tpusim llm validate --data` (JSON lines).
    Measurements,
}

impl InputKind {
    /// The format's name in errors.
    pub fn name(self) -> &'static str {
        match self {
            InputKind::Onnx => "an ONNX model",
            InputKind::ScaleSimConfig => "a SCALE-Sim config",
            InputKind::Topology => "a SCALE-Sim topology",
            InputKind::ScaleSimLayout => "a SCALE-Sim layout",
            InputKind::ChipToml => "a chip TOML",
            InputKind::SweepToml => "a sweep TOML",
            InputKind::TpuMlirCache => "a TPU-MLIR layer-group cache",
            InputKind::PlanJson => "a plan JSON",
            InputKind::Hlo => "an HLO dump",
            InputKind::ModelJson => "a model config JSON",
            InputKind::Measurements => "measurements (JSON lines)",
        }
    }

    /// The file's name in "cannot read …" errors.
    pub fn noun(self) -> &'static str {
        match self {
            InputKind::Onnx => "ONNX file",
            InputKind::ScaleSimConfig => "SCALE-Sim config",
            InputKind::Topology => "topology CSV",
            InputKind::ScaleSimLayout => "layout CSV",
            InputKind::ChipToml => "chip file",
            InputKind::SweepToml => "sweep file",
            InputKind::TpuMlirCache => "TPU-MLIR cache",
            InputKind::PlanJson => "plan file",
            InputKind::Hlo => "HLO file",
            InputKind::ModelJson => "model file",
            InputKind::Measurements => "measurements file",
        }
    }

    /// The most bytes a file of this format can need.
    pub fn limit(self) -> u64 {
        const MIB: u64 = 1 << 20;
        match self {
            InputKind::Onnx => 2048 * MIB,
            InputKind::ScaleSimConfig
            | InputKind::ChipToml
            | InputKind::SweepToml
            | InputKind::ModelJson => MIB,
            InputKind::Topology
            | InputKind::ScaleSimLayout
            | InputKind::TpuMlirCache
            | InputKind::Measurements => 64 * MIB,
            InputKind::PlanJson => 256 * MIB,
            InputKind::Hlo => 1024 * MIB,
        }
    }
}

/// Bytes read before the rest, to tell a wrong file at once (a PNG, `/dev/zero`).
const SNIFF_BYTES: u64 = 4096;

impl InputKind {
    /// Check the first bytes of a file: a text format holds no NUL byte; an ONNX model
    /// (a protobuf message) starts with a field key whose number is at least 1 and
    /// whose wire type exists. `Err` says what was found instead.
    fn sniff(self, head: &[u8]) -> std::result::Result<(), String> {
        if self == InputKind::Onnx {
            if let Some(what) = known_format(head) {
                return Err(format!("it starts like {what}"));
            }
            return match head.first() {
                None => Err("the file is empty".into()),
                Some(&b) if b & 0x80 == 0 && (b >> 3 == 0 || matches!(b & 7, 3 | 4 | 6 | 7)) => {
                    Err(format!(
                        "its first byte 0x{b:02x} cannot start a protobuf message"
                    ))
                }
                Some(_) => Ok(()),
            };
        }
        match head.iter().position(|&b| b == 0) {
            Some(at) => Err(format!(
                "it holds a NUL byte at offset {at}, so it is not text"
            )),
            None => Ok(()),
        }
    }
}

/// Formats users point at by mistake, by their magic bytes.
fn known_format(head: &[u8]) -> Option<&'static str> {
    const MAGIC: [(&[u8], &str); 7] = [
        (b"\x89PNG", "a PNG image"),
        (b"\xff\xd8\xff", "a JPEG image"),
        (
            b"PK\x03\x04",
            "a zip archive (a PyTorch checkpoint or a zipped model?)",
        ),
        (b"\x1f\x8b", "a gzip file (unpack it first)"),
        (b"%PDF", "a PDF document"),
        (b"\x93NUMPY", "a .npy array"),
        (b"\x7fELF", "a program (ELF)"),
    ];
    MAGIC
        .iter()
        .find(|(m, _)| head.starts_with(m))
        .map(|(_, what)| *what)
}

/// Read a whole file of format `kind`, refusing one larger than the format's limit.
pub fn read_bytes(path: &Path, kind: InputKind) -> Result<Vec<u8>> {
    let limit = kind.limit();
    let too_large = |size: Option<u64>| {
        let given = size.map_or_else(
            || format!("holds more than {} bytes", limit),
            |s| format!("is {s} bytes"),
        );
        anyhow::anyhow!(
            "'{}' {given}, larger than {} can be (limit {}); is it the right file?",
            path.display(),
            kind.name(),
            crate::fmt::bytes(limit as f64)
        )
    };
    let read_err = || format!("cannot read {} '{}'", kind.noun(), path.display());
    let file = std::fs::File::open(path).with_context(read_err)?;
    let meta = file.metadata().with_context(read_err)?;
    if meta.is_dir() {
        bail!("cannot read '{}': it is a folder", path.display());
    }
    if meta.is_file() && meta.len() > limit {
        return Err(too_large(Some(meta.len())));
    }
    let mut bytes = Vec::with_capacity(if meta.is_file() {
        meta.len() as usize
    } else {
        0
    });
    let mut reader = file.take(limit + 1);
    (&mut reader)
        .take(SNIFF_BYTES)
        .read_to_end(&mut bytes)
        .with_context(read_err)?;
    kind.sniff(&bytes)
        .map_err(|why| anyhow::anyhow!("'{}' is not {}: {why}", path.display(), kind.name()))?;
    reader.read_to_end(&mut bytes).with_context(read_err)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(None));
    }
    Ok(bytes)
}

/// Read a whole text file of format `kind` (see [`read_bytes`]); refuses invalid UTF-8.
pub fn read_input(path: &Path, kind: InputKind) -> Result<String> {
    let bytes = read_bytes(path, kind)?;
    String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "'{}' is not text (invalid UTF-8 at byte {}), so not {}",
            path.display(),
            e.utf8_error().valid_up_to(),
            kind.name()
        )
    })
}

/// Resolve a MODEL argument: built-in name, or a file read here (libraries do no I/O).
pub fn model_source(model: &str) -> Result<ModelSource> {
    Ok(match ModelArg::parse(model) {
        ModelArg::Builtin(n) => ModelSource::Builtin(n),
        ModelArg::Onnx { path, name } => ModelSource::Onnx {
            name,
            bytes: read_bytes(Path::new(&path), InputKind::Onnx)?,
        },
        ModelArg::Topology { path, name } => ModelSource::Topology {
            name,
            text: read_input(Path::new(&path), InputKind::Topology)?,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_and_large_files_stop_at_the_limit() {
        let e = read_input(Path::new("/dev/zero"), InputKind::ChipToml)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/dev/zero") && e.contains("chip TOML") && e.contains("NUL"),
            "{e}"
        );
        let png = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(png.path(), b"\x89PNG\r\n\x1a\n....").unwrap();
        let e = read_bytes(png.path(), InputKind::Onnx)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("is not an ONNX model: it starts like a PNG image"),
            "{e}"
        );
        let e = read_bytes(Path::new("/dev/zero"), InputKind::Onnx)
            .unwrap_err()
            .to_string();
        assert!(e.contains("ONNX model") && e.contains("0x00"), "{e}");
        let e = read_input(Path::new("/dev/urandom"), InputKind::SweepToml)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/dev/urandom") && e.contains("sweep TOML"),
            "{e}"
        );
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("big.toml");
        std::fs::write(&p, vec![b'#'; (1 << 20) + 1]).unwrap();
        let e = read_input(&p, InputKind::ChipToml).unwrap_err().to_string();
        assert!(
            e.contains("big.toml") && e.contains("is 1048577 bytes") && e.contains("limit 1 MiB"),
            "{e}"
        );
        std::fs::write(&p, vec![b'#'; 1 << 20]).unwrap();
        assert_eq!(read_input(&p, InputKind::ChipToml).unwrap().len(), 1 << 20);
    }

    #[test]
    fn binary_text_and_folders_name_the_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.cfg");
        std::fs::write(&p, b"ab\xffcd").unwrap();
        let e = read_bytes(&p, InputKind::Onnx).map(|b| b.len()).unwrap();
        assert_eq!(e, 5);
        let e = read_input(&p, InputKind::ScaleSimConfig)
            .unwrap_err()
            .to_string();
        assert!(e.contains("x.cfg") && e.contains("byte 2"), "{e}");
        let e = read_input(d.path(), InputKind::ScaleSimConfig)
            .unwrap_err()
            .to_string();
        assert!(e.contains("folder"), "{e}");
    }
}
