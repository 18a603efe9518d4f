//! Every kept fuzz input through its target, in `cargo test`: the seed and grown corpora
//! (`fuzz/corpus/TARGET/`) and each minimised finding that was fixed
//! (`fuzz/regressions/TARGET/`, named after what it broke). A panic here is a
//! regression of a fixed bug or a new one the corpus reaches.

use rayon::prelude::*;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    v.sort();
    v
}

/// Every input of `kind` (corpus or regressions) through its target, on every core
/// (nd_onnx's planned transformers take most of the time); the inputs run.
fn replay_folder(kind: &str) -> usize {
    let inputs: Vec<(&str, PathBuf)> = tpusim_fuzz_targets::TARGETS
        .iter()
        .flat_map(|&t| {
            files(&root().join(kind).join(t))
                .into_iter()
                .map(move |f| (t, f))
        })
        .collect();
    inputs.par_iter().for_each(|(t, f)| {
        let data = std::fs::read(f).unwrap();
        assert!(
            tpusim_fuzz_targets::replay(t, &data),
            "{t}: {}",
            f.display()
        );
    });
    inputs.len()
}

#[test]
fn fixed_findings_stay_fixed() {
    let n = replay_folder("regressions");
    assert!(n >= 1, "{n} regression inputs");
}

#[test]
fn every_corpus_input_runs_clean() {
    let n = replay_folder("corpus");
    assert!(n >= 400, "{n} corpus inputs");
}

#[test]
fn every_target_has_a_fuzz_binary_and_a_corpus_folder() {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    for t in tpusim_fuzz_targets::TARGETS {
        assert!(
            manifest.contains(&format!("name = \"{t}\"")),
            "{t} has no [[bin]]"
        );
        assert!(
            root().join("corpus").join(t).is_dir(),
            "{t} has no corpus folder"
        );
    }
    assert!(!tpusim_fuzz_targets::replay("no_such_target", b""));
}
