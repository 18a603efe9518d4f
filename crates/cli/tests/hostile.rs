//! The hardening round's findings (issue 24), each replayed through the real binary:
//! hangs and aborts end in one clear error, names from input files cannot drive the
//! terminal, user numbers cannot overflow into `inf`, file inputs are bounded, and
//! output files are written whole or not at all.

mod common;

use common::{bad_input, tpusim};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("tpusim")
}

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../graph/tests/data")
        .join(name)
}

/// No stray temporary file left in `dir`: only the files named in `expected` (and
/// folders) are there.
fn no_leftovers(dir: &Path, expected: &[&str]) {
    let left: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| !e.file_type().unwrap().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !expected.contains(&n.as_str()))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn scalesim_user_mode_with_a_huge_array_ends_at_once() {
    let d = tempfile::tempdir().unwrap();
    let cfg = d.path().join("user.cfg");
    std::fs::write(
        &cfg,
        "[general]\nrun_name = big\n[architecture_presets]\nArrayHeight: 4294967295\nArrayWidth: 8\n\
         IfmapSramSzkB: 1\nFilterSramSzkB: 1\nOfmapSramSzkB: 1\nIfmapOffset: 0\nFilterOffset: 10000000\n\
         OfmapOffset: 20000000\nDataflow: ws\nBandwidth: 10\nReadRequestBuffer: 32\nWriteRequestBuffer: 32\n\
         [layout]\nIfmapCustomLayout: False\nFilterCustomLayout: False\nIfmapSRAMBankBandwidth: 10\n\
         IfmapSRAMBankNum: 10\nIfmapSRAMBankPort: 2\nFilterSRAMBankBandwidth: 10\nFilterSRAMBankNum: 10\n\
         FilterSRAMBankPort: 2\n[sparsity]\nSparsitySupport: false\n\
         [run_presets]\nInterfaceBandwidth: USER\nUseRamulatorTrace: False\n",
    )
    .unwrap();
    let topo = d.path().join("t.csv");
    std::fs::write(&topo, "Layer name,IFMAP Height,IFMAP Width,Filter Height,Filter Width,Channels,Num Filter,Strides,\nc1,16,16,3,3,4,8,1,\n").unwrap();
    let t0 = Instant::now();
    let out = tpusim()
        .args(["systolic", "run", "--scalesim-compat", "-c"])
        .arg(&cfg)
        .arg("-t")
        .arg(&topo)
        .arg("-p")
        .arg(d.path().join("out"))
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(t0.elapsed() < Duration::from_secs(10));
    bad_input(&out, &["demand rows", "limit"]);
    // a failed run writes no report at all
    assert!(!d.path().join("out/big/COMPUTE_REPORT.csv").exists());
}

/// Run the binary under a 4 GiB address-space limit, as the hardening harness did.
fn under_4gib(args: &str) -> std::process::Output {
    std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v 4194304; exec '{}' {args}",
            bin().display()
        ))
        .output()
        .unwrap()
}

#[test]
fn engine_runs_that_cannot_fit_are_refused_with_their_bytes() {
    for args in [
        "systolic check --m 268 --k 4 --n 1000000 --rows 64 --cols 64 --dtype i32",
        "systolic conv --ifmap 16384,16384,1 --filter 1,1,1 --mode cycle --rows 4 --cols 4",
    ] {
        let out = under_4gib(args);
        bad_input(&out, &["cycle engine would need", "GiB", "analytic mode"]);
    }
}

/// small_cnn.onnx with node `branch1x1` renamed to ESC[2J + newline and its op type
/// made unknown, bytes for bytes (protobuf lengths unchanged).
fn hostile_onnx(dir: &Path) -> PathBuf {
    let mut bytes = std::fs::read(data("small_cnn.onnx")).unwrap();
    let from = b"branch1x1\"\x04Conv";
    let to = b"\x1b[2J\nok!!\"\x04Cxnv";
    let at = bytes.windows(from.len()).position(|w| w == from).unwrap();
    bytes[at..at + from.len()].copy_from_slice(to);
    let p = dir.join("hostile.onnx");
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn names_from_files_are_escaped_and_long_arguments_cut() {
    let d = tempfile::tempdir().unwrap();
    let onnx = hostile_onnx(d.path());
    for verb in ["plan", "report"] {
        let out = tpusim().arg(verb).arg(&onnx).output().unwrap();
        let line = bad_input(&out, &["Cxnv", "\\x1b[2J\\nok!!"]);
        assert!(!line.contains('\x1b'), "{line:?}");
    }
    // a chip name with a newline and an escape
    let toml = String::from_utf8(
        tpusim()
            .args(["chip", "show", "v5e", "--toml"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let evil = toml
        .replacen(
            "name = \"v5e\"",
            "name = \"v5e\\nerror: all good\\u001b]0;t\\u0007\"",
            1,
        )
        .replacen("hbm_bytes = ", "hbm_bytes = -", 1);
    assert_ne!(evil, toml);
    let chip = d.path().join("evil.toml");
    std::fs::write(&chip, evil).unwrap();
    let out = tpusim()
        .args(["chip", "show", "x", "--chip-file"])
        .arg(&chip)
        .output()
        .unwrap();
    let line = bad_input(&out, &[]);
    assert!(!line.contains('\x1b') && !line.contains('\x07'), "{line:?}");
    // a 120 kB argument is not echoed whole
    let long = format!("f32[{}]", "9".repeat(120_000));
    let out = tpusim().args(["layout", "info", &long]).output().unwrap();
    let line = bad_input(&out, &["chars cut"]);
    assert!(line.len() < 2_000, "{}", line.len());
}

#[test]
fn a_failing_import_prints_its_error_and_nothing_else() {
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("r18.json");
    tpusim()
        .args(["plan", "resnet18", "--chip", "bm1684x", "--export-tpu-mlir"])
        .arg(&cache)
        .assert()
        .success();
    let out = tpusim()
        .args(["plan", "resnet18", "--chip", "cv180x", "--import-tpu-mlir"])
        .arg(&cache)
        .output()
        .unwrap();
    bad_input(&out, &[]);
}

#[test]
fn float_overflow_on_user_numbers_is_an_error() {
    let out = tpusim()
        .args([
            "roofline", "op", "--chip", "v5e", "--bytes", "1", "--flops", "1e308", "--peak",
            "1e-300", "--json",
        ])
        .output()
        .unwrap();
    bad_input(&out, &["overflows"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["kind"], "bad_input");
    let out = tpusim()
        .args([
            "comm",
            "p2p",
            "v5e",
            "4x4",
            "--from",
            "0,0",
            "--to",
            "3,3",
            "--bytes",
            "1e6",
            "--hop-latency",
            "1e308",
        ])
        .output()
        .unwrap();
    bad_input(&out, &["first-byte time", "overflows"]);
}

#[test]
fn every_file_input_is_bounded_and_names_the_file() {
    let d = tempfile::tempdir().unwrap();
    let zero = |name: &str| {
        let p = d.path().join(name);
        std::os::unix::fs::symlink("/dev/zero", &p).unwrap();
        p.to_str().unwrap().to_string()
    };
    let (onnx, csv, toml, sweep, cfg, hlo, plan, cache) = (
        zero("z.onnx"),
        zero("z.csv"),
        zero("z.toml"),
        zero("s.toml"),
        zero("z.cfg"),
        zero("z.hlo"),
        zero("p.json"),
        zero("c.json"),
    );
    let cases: Vec<Vec<&str>> = vec![
        vec!["report", &onnx],
        vec!["plan", &csv],
        vec!["chip", "show", "x", "--chip-file", &toml],
        vec!["lmem", "show", "--chip-file", &toml],
        vec!["report", "--sweep", &sweep],
        vec!["systolic", "run", "-c", &cfg, "-t", &csv],
        vec!["layout", "hlo", &hlo],
        vec!["plan", "verify", &plan],
        vec!["plan", "resnet18", "--import-tpu-mlir", &cache],
    ];
    for args in cases {
        let t0 = Instant::now();
        let out = under_4gib(&args.join(" "));
        let line = bad_input(&out, &[]);
        assert!(
            line.contains(d.path().to_str().unwrap()),
            "{args:?}: {line}"
        );
        assert!(t0.elapsed() < Duration::from_secs(5), "{args:?}");
    }
}

#[test]
fn errors_say_what_is_wrong_in_the_users_terms() {
    let d = tempfile::tempdir().unwrap();
    let png = d.path().join("model.onnx");
    std::fs::write(&png, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
    let out = tpusim().arg("report").arg(&png).output().unwrap();
    bad_input(&out, &["model.onnx", "not an ONNX model", "PNG"]);
    let out = tpusim()
        .args(["plan", "resnet18", "--batch", "-1"])
        .output()
        .unwrap();
    let line = bad_input(&out, &["--batch=-1"]);
    assert!(!line.contains("'-- -1'"), "{line}");
    let toml = d.path().join("c.toml");
    std::fs::write(&toml, "name = \"x\"\n").unwrap();
    let out = tpusim()
        .args(["chip", "show", "x", "--chip-file"])
        .arg(&toml)
        .output()
        .unwrap();
    let line = bad_input(&out, &["missing field"]);
    assert!(!line.contains("at byte"), "{line}");
    let out = tpusim()
        .args(["report", "--summary", "--html"])
        .arg(d.path().join("nowhere/r.html"))
        .output()
        .unwrap();
    let line = bad_input(&out, &["nowhere", "does not exist"]);
    assert!(!line.contains(".tpusim-"), "{line}");
}

#[test]
fn json_failures_are_one_json_object() {
    let out = tpusim()
        .args(["report", "nosuchmodel", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["kind"], "bad_input");
    assert!(v["error"].as_str().unwrap().contains("nosuchmodel"));
    // a usage error under --json too
    let out = tpusim()
        .args(["plan", "--json", "--nope"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["kind"], "bad_input");
    // without --json, stdout stays empty
    let out = tpusim().args(["report", "nosuchmodel"]).output().unwrap();
    assert!(out.stdout.is_empty());
}

#[test]
fn outputs_go_through_symlinks_into_devices_and_keep_modes() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    let real = d.path().join("real.svg");
    std::fs::write(&real, "old").unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
    let link = d.path().join("link.svg");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    tpusim()
        .args(["plan", "tiny_cnn_not_a_model"])
        .assert()
        .code(2);
    tpusim()
        .args(["plan", "resnet18", "--svg"])
        .arg(&link)
        .assert()
        .success();
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&real).unwrap().starts_with("<svg"));
    assert_eq!(
        std::fs::metadata(&real).unwrap().permissions().mode() & 0o777,
        0o600
    );
    tpusim()
        .args(["plan", "resnet18", "--svg", "/dev/null"])
        .assert()
        .success();
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
    no_leftovers(d.path(), &["real.svg", "link.svg"]);
}

#[test]
fn several_outputs_are_written_all_or_none() {
    let d = tempfile::tempdir().unwrap();
    let svg = d.path().join("p.svg");
    std::fs::write(&svg, "old").unwrap();
    // the export path is a folder: the command fails and the SVG is untouched
    let folder = d.path().join("cache.json");
    std::fs::create_dir(&folder).unwrap();
    let out = tpusim()
        .args(["plan", "resnet18", "--svg"])
        .arg(&svg)
        .arg("--export-tpu-mlir")
        .arg(&folder)
        .output()
        .unwrap();
    bad_input(&out, &["is a folder"]);
    assert_eq!(std::fs::read_to_string(&svg).unwrap(), "old");
    no_leftovers(d.path(), &["p.svg"]);
}

/// Kill a large `layout convert` at random points: the destination is either the old
/// file or the complete new one, and no temporary file is left, whatever the signal, but
/// for SIGKILL in the instant between linking the finished file under a hidden name and
/// renaming it over the old one (no handler sees SIGKILL): that name holds the complete
/// output, and the next output written in the folder removes it.
#[test]
fn a_killed_convert_leaves_the_old_file_or_the_new_one() {
    let d = tempfile::tempdir().unwrap();
    let (rows, cols) = (4096u64, 8192u64); // 64 MiB of f32
    let input = d.path().join("in.npy");
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&input).unwrap());
        use std::io::Write;
        f.write_all(&common::npy_header("<f4", &format!("({rows}, {cols})")))
            .unwrap();
        let row: Vec<u8> = (0..cols).flat_map(|x| (x as f32).to_le_bytes()).collect();
        for _ in 0..rows {
            f.write_all(&row).unwrap();
        }
    }
    let out = d.path().join("out.bin");
    std::fs::write(&out, b"old").unwrap();
    let from = format!("f32[{rows},{cols}]");
    let to = format!("f32[{rows},{cols}]{{1,0:T(8,128)}}");
    let full = (rows * cols * 4) as usize;
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut complete = 0;
    for i in 0..12 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let delay = Duration::from_micros(seed % 150_000);
        let sig = [libc::SIGKILL, libc::SIGTERM, libc::SIGINT][i % 3];
        let mut child = std::process::Command::new(bin())
            .args(["layout", "convert", "--from", &from, "--to", &to])
            .arg(&input)
            .arg(&out)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        // SAFETY: signalling our own child.
        unsafe {
            libc::kill(child.id() as i32, sig);
        }
        child.wait().unwrap();
        let now = std::fs::read(&out).unwrap();
        assert!(
            now == b"old" || now.len() == full,
            "torn output of {} bytes",
            now.len()
        );
        if now.len() == full {
            complete += 1;
            std::fs::write(&out, b"old").unwrap();
        }
        if sig == libc::SIGKILL {
            clear_a_kill_between_link_and_rename(d.path(), full);
        }
        no_leftovers(d.path(), &["in.npy", "out.bin"]);
    }
    // at least some runs must have been cut short for this test to mean anything
    assert!(complete < 12, "every run finished before its signal");
}

/// Where `dir` holds a hidden name a SIGKILL left between link and rename, check that it
/// holds the finished output (`full` bytes) and write a next output in `dir`, which must
/// remove it.
fn clear_a_kill_between_link_and_rename(dir: &Path, full: usize) {
    let hidden: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(".tpusim-")
        })
        .collect();
    if hidden.is_empty() {
        return;
    }
    for p in &hidden {
        assert_eq!(std::fs::metadata(p).unwrap().len() as usize, full, "{p:?}");
    }
    let next = dir.join("next.svg");
    tpusim()
        .args(["layout", "map", "f32[8,128]", "--svg"])
        .arg(&next)
        .assert()
        .success();
    std::fs::remove_file(&next).unwrap();
}

#[test]
fn convert_writes_real_npy_or_refuses() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    let npy = common::npy("<f2", "(2, 3)", &[0u8; 12]);
    std::fs::write(p("h.npy"), &npy).unwrap();
    // float16 data is not bf16
    let out = tpusim()
        .args([
            "layout",
            "convert",
            "--from",
            "bf16[2,3]",
            "--to",
            "bf16[2,3]{1,0:T(2,128)}",
            &p("h.npy"),
            &p("o.bin"),
        ])
        .output()
        .unwrap();
    bad_input(&out, &["'<f2'", "--reinterpret"]);
    let ok = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "umask 022; exec '{}' layout convert --reinterpret --from 'bf16[2,3]' --to 'bf16[2,3]{{1,0:T(2,128)}}' '{}' '{}'",
            bin().display(),
            p("h.npy"),
            p("o.bin")
        ))
        .status()
        .unwrap();
    assert!(ok.success());
    let mode = std::fs::metadata(p("o.bin")).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644, "{mode:o}");
    // a tiled layout is not a .npy file
    let out = tpusim()
        .args([
            "layout",
            "convert",
            "--from",
            "f16[2,3]",
            "--to",
            "f16[2,3]{1,0:T(2,128)}",
            &p("h.npy"),
            &p("t.npy"),
        ])
        .output()
        .unwrap();
    bad_input(&out, &["t.npy", "named .npy", ".bin"]);
    assert!(!d.path().join("t.npy").exists());
}
