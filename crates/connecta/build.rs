//! Packs the binary's relative relocations (`DT_RELR`) when the build
//! host's linker and C library both support it.
//!
//! A position-independent executable carries a 24-byte relocation for
//! every pointer in its data; the dynamic loader reads them all at each
//! start, and those pages of the file stay resident in every process that
//! runs it: the gateway and each sandbox worker (1.3 MB of a worker's
//! 9 MB, docs/performance.md "Memory"). Packed, they take a few KB. The
//! binary stays position-independent: address randomization is unchanged.
//!
//! Packed relocations need glibc 2.36 or later where the binary runs and a
//! linker that knows `-z pack-relative-relocs` (GNU ld 2.38, lld 15). The
//! linker marks the binary as needing that glibc, so on a build host with
//! an older one the binary would not start there. This script therefore
//! links and runs a small program with the flag first and passes the flag
//! on only if that program runs. Cross builds are left as they are.

use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let native = var("HOST") == var("TARGET");
    let linux_gnu = var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu";
    let Some(out) = std::env::var_os("OUT_DIR") else {
        return;
    };
    let packed = native && linux_gnu && packed_relocations_run(Path::new(&out));
    if packed {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    // For the release-artefact tests: whether the probe passed here.
    println!("cargo:rustc-env=CONNECTA_PACKED_RELOCATIONS={packed}");
}

/// Whether a program linked with packed relocations (it has some: a table
/// of pointers) runs on this host.
fn packed_relocations_run(dir: &Path) -> bool {
    let source = dir.join("relr_probe.c");
    let program = dir.join("relr_probe");
    let probe = "static const char *words[] = {\"a\", \"b\", \"c\"};\n\
                 int main(void) { return words[2][0] == 'c' ? 0 : 1; }\n";
    if std::fs::write(&source, probe).is_err() {
        return false;
    }
    let linker = std::env::var("RUSTC_LINKER").unwrap_or_else(|_| "cc".to_owned());
    let linked = Command::new(linker)
        .args(["-fPIE", "-pie", "-Wl,-z,pack-relative-relocs", "-o"])
        .arg(&program)
        .arg(&source)
        .output()
        .is_ok_and(|o| o.status.success());
    linked && Command::new(&program).status().is_ok_and(|s| s.success())
}
