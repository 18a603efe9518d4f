//! Build script: the AVX-512 intrinsics the relayout kernels use were stabilised in Rust
//! 1.89, later than the workspace's minimum Rust version, so they are compiled only when
//! the compiler has them (`cfg(tpusim_avx512)`); older compilers build the AVX2/SSE2
//! kernels alone, which compute the same bytes.

use std::process::Command;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(tpusim_avx512)");
    println!("cargo:rerun-if-env-changed=RUSTC");
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    // "rustc 1.95.0 (59807616e 2026-04-14)" → (1, 95)
    let version = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|v| {
            let num = v.split_whitespace().nth(1)?.to_string();
            let mut it = num.split('.');
            let major: u32 = it.next()?.parse().ok()?;
            let minor: u32 = it.next()?.parse().ok()?;
            Some((major, minor))
        });
    if version.is_some_and(|v| v >= (1, 89)) {
        println!("cargo:rustc-cfg=tpusim_avx512");
    }
}
