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
//!
//! It also lays out first, in `.text`, the functions a gateway and a
//! sandbox worker run (`link/hot-functions.txt`, made by
//! `scripts/hot-functions`). A process maps the binary's code page by page
//! as it runs it, and the kernel maps the cached pages around each one too
//! (64 KB), so about 6 MB of code that ran, spread over 28 MB of `.text`,
//! kept some 25 MB of the file resident in the gateway; laid out together
//! it keeps about 12 MB (docs/performance.md, "The binary's own pages").
//! The list names symbols; a name the binary does not have is skipped, so
//! a stale list only lays out less (a test requires it to be made for this
//! compiler and this Cargo.lock, since most names carry a hash of both).
//! Only a linker that takes `--symbol-ordering-file` gets it (lld, the
//! default for this target; not GNU ld, gold or mold): a small program is
//! linked with it first, as rustc would link.

use std::path::Path;
use std::process::Command;

#[path = "link/ordering.rs"]
mod ordering;

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

    let list = Path::new("link/hot-functions.txt");
    println!("cargo:rerun-if-changed={}", list.display());
    println!("cargo:rerun-if-changed=../../Cargo.lock");
    println!("cargo:rerun-if-changed=link/ordering.rs");
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let ordered = std::fs::canonicalize(list).is_ok_and(|list| {
        let args = ordering::ordering_args(&list);
        let takes = links_with(&rustc, Path::new(&out), &args);
        if takes {
            for arg in &args {
                println!("cargo:rustc-link-arg-bins={arg}");
            }
        }
        takes
    });
    println!("cargo:rustc-env=CONNECTA_HOT_FUNCTIONS_FIRST={ordered}");
    // Most names in the list carry a hash of the compiler's version and of
    // the crate's dependencies: the test requires the list to have been
    // made for this compiler and this Cargo.lock.
    let made_for = std::fs::read_to_string(list)
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix(MADE_FOR).map(str::to_owned))
        })
        .unwrap_or_default();
    println!("cargo:rustc-env=CONNECTA_HOT_FUNCTIONS_MADE_FOR={made_for}");
    println!(
        "cargo:rustc-env=CONNECTA_HOT_FUNCTIONS_BUILT_FOR={}",
        built_for(&rustc)
    );
}

/// The header line of the list that names what it was made for.
const MADE_FOR: &str = "# made for: ";

/// `<rustc -vV's first line>; Cargo.lock <FNV-1a 64 of its bytes>`, as
/// `scripts/hot_functions.py` writes it.
fn built_for(rustc: &str) -> String {
    let version = Command::new(rustc)
        .arg("-vV")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|text| text.lines().next().map(str::to_owned))
        .unwrap_or_default();
    let lock = std::fs::read("../../Cargo.lock").unwrap_or_default();
    let hash = lock.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("{version}; Cargo.lock {hash:016x}")
}

/// Whether rustc links a small program for the target with `args` passed
/// to the linker, with the flags and linker this build uses.
fn links_with(rustc: &str, dir: &Path, args: &[String]) -> bool {
    let source = dir.join("order_probe.rs");
    if std::fs::write(&source, "fn main() {}\n").is_err() {
        return false;
    }
    let mut command = Command::new(rustc);
    command
        .arg("--crate-name=order_probe")
        .arg("-o")
        .arg(dir.join("order_probe"))
        .arg(&source);
    if let Ok(target) = std::env::var("TARGET") {
        command.arg(format!("--target={target}"));
    }
    if let Ok(linker) = std::env::var("RUSTC_LINKER") {
        command.arg(format!("-Clinker={linker}"));
    }
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    command.args(flags.split('\x1f').filter(|f| !f.is_empty()));
    for arg in args {
        command.arg(format!("-Clink-arg={arg}"));
    }
    let linked = command.output().is_ok_and(|o| o.status.success());
    let _ = std::fs::remove_file(dir.join("order_probe"));
    linked
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
