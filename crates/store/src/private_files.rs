//! Files that hold what the gateway keeps (the SQLite database and its
//! `-wal`/`-shm`, the vault key file, the operator secret) are readable by
//! the gateway's user alone, whatever the umask: the data directory is
//! created 0700 and those files 0600. A data directory that already exists
//! is left as the operator made it (it may be shared on purpose), but its
//! files are tightened, and a directory others can enter is named in a
//! warning.

use std::path::Path;

/// Create `dir` (and missing parents) with mode 0700. An existing
/// directory is left alone.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

/// Make `path` readable and writable by its owner only, if it exists.
pub fn restrict_file(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        match std::fs::metadata(path) {
            Ok(m) if m.permissions().mode() & 0o077 != 0 => {
                std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
            }
            Ok(_) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
        }
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Ok(())
    }
}

/// Create `path` empty with mode 0600 when it does not exist (so a library
/// that creates it later with its own mode finds it already private).
pub fn create_private_file(path: &Path) -> std::io::Result<()> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    opts.open(path).map(drop)
}

/// A warning when other users may enter `dir` (group or other bits set).
pub fn open_to_others(dir: &Path) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir).ok()?.permissions().mode();
        (mode & 0o077 != 0).then(|| {
            format!(
                "the data directory {} has mode {:o}: other users may list it; `chmod 700` it unless that is on purpose (its files are kept 0600)",
                dir.display(),
                mode & 0o777
            )
        })
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        None
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).expect("metadata").permissions().mode() & 0o777
    }

    #[test]
    fn directories_are_created_0700_and_files_tightened_to_0600() {
        let root = tempfile::tempdir().expect("tempdir");
        let dir = root.path().join("a/b");
        create_private_dir(&dir).expect("created");
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&root.path().join("a")), 0o700);
        assert_eq!(open_to_others(&dir), None);

        let f = dir.join("f");
        std::fs::write(&f, "x").expect("write");
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        restrict_file(&f).expect("restricted");
        assert_eq!(mode(&f), 0o600);
        restrict_file(&dir.join("absent")).expect("nothing to do");

        let g = dir.join("g");
        create_private_file(&g).expect("created");
        assert_eq!(mode(&g), 0o600);

        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        create_private_dir(&dir).expect("exists");
        assert_eq!(mode(&dir), 0o755, "an existing directory is left alone");
        assert!(open_to_others(&dir).is_some_and(|w| w.contains("755")));
    }
}
