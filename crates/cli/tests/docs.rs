//! `tpusim completions` and `tpusim man`, generated from the parser's own command tree.

mod common;

use common::tpusim;

#[test]
fn bash_completions_are_valid_bash_and_know_every_verb() {
    let out = tpusim().args(["completions", "bash"]).output().unwrap();
    assert!(out.status.success());
    let script = String::from_utf8(out.stdout).unwrap();
    for verb in ["layout", "report", "plan", "systolic", "completions", "man"] {
        assert!(script.contains(verb), "{verb}");
    }
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("tpusim.bash");
    std::fs::write(&p, &script).unwrap();
    let syntax = std::process::Command::new("bash")
        .arg("-n")
        .arg(&p)
        .status()
        .unwrap();
    assert!(syntax.success(), "bash -n rejected the completion script");
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let out = tpusim().args(["completions", shell]).output().unwrap();
        assert!(out.status.success() && out.stdout.len() > 1000, "{shell}");
    }
    common::bad_input(
        &tpusim().args(["completions", "tcsh"]).output().unwrap(),
        &["tcsh"],
    );
}

#[test]
fn man_pages_cover_every_verb() {
    let out = tpusim().arg("man").output().unwrap();
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(
        page.contains(".TH tpusim 1") && page.contains("report"),
        "{page}"
    );
    let d = tempfile::tempdir().unwrap();
    tpusim()
        .args(["man", "--out"])
        .arg(d.path())
        .assert()
        .success();
    for name in [
        "tpusim.1",
        "tpusim-report.1",
        "tpusim-layout-convert.1",
        "tpusim-plan-verify.1",
    ] {
        let text = std::fs::read_to_string(d.path().join(name)).unwrap();
        assert!(text.starts_with(".ie") || text.contains(".TH"), "{name}");
    }
    let verb = std::fs::read_to_string(d.path().join("tpusim-layout-convert.1")).unwrap();
    assert!(
        verb.contains("reinterpret"),
        "options of the verb are documented"
    );
}
