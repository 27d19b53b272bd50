//! The linker arguments that lay out listed functions first. Shared by
//! `build.rs` and the release-artefact tests, so the tests check the
//! arguments the build passes.

use std::path::Path;

/// The linker arguments that lay out the functions named in `list` first,
/// without a warning for each name the binary does not have. `-Xlinker`
/// hands each to the linker whole (`-Wl,` would split a path at its
/// commas).
pub fn ordering_args(list: &Path) -> Vec<String> {
    vec![
        "-Xlinker".to_owned(),
        format!("--symbol-ordering-file={}", list.display()),
        "-Xlinker".to_owned(),
        "--no-warn-symbol-ordering".to_owned(),
    ]
}
