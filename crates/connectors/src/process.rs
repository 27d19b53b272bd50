//! The one place this crate needs `unsafe`: what a downstream child process
//! is made to do between `fork` and `exec`.
//!
//! - It gets SIGKILL when the gateway dies, so even a SIGKILLed gateway
//!   leaves no orphaned downstream servers.
//! - It cannot reach the gateway's own files (the data directory with the
//!   database, the operator secret and the vault key file): a Landlock
//!   ruleset, built here in the parent and applied in the child, grants the
//!   whole filesystem except those paths. Landlock can only grant, never
//!   deny, so "everything but the data directory" is spelled out: every
//!   entry of `/` but the one on the way to the data directory, every entry
//!   of that one but the next, and so on. The directories on the way keep
//!   only the right to be listed: a child cannot create new files directly
//!   in them (a child that needs to should run with a `cwd` elsewhere, or
//!   the data directory live elsewhere). A data directory under a directory
//!   where every process creates files (sticky and world-writable, like
//!   `/tmp`) would take that from every child, so there children run
//!   unconfined, and the gateway says so once; so they do on a kernel
//!   without Landlock.
//!
//! Everything that runs in the child (the `pre_exec` closures) is
//! async-signal-safe: plain system calls on values prepared before the
//! fork, no allocation.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::Once;

use tokio::process::Command;

/// Arrange for the child to receive SIGKILL when its parent exits (Linux).
/// Grandchildren are covered by the process-group kill on orderly shutdown.
#[allow(unsafe_code)]
pub(crate) fn die_with_parent(cmd: &mut Command) {
    #[cfg(target_os = "linux")]
    // SAFETY: the closure runs in the forked child before exec and only calls
    // async-signal-safe functions (prctl, getppid, kill); it allocates nothing.
    unsafe {
        let parent = libc::getpid();
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent may have died between fork and prctl.
            if libc::getppid() != parent {
                libc::kill(libc::getpid(), libc::SIGKILL);
            }
            Ok(())
        });
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cmd;
}

/// Keep the child out of `hidden` (and everything beneath): see the module
/// docs. Sets `PR_SET_NO_NEW_PRIVS` in the child, which Landlock needs (a
/// set-user-ID program run by the child gains nothing). Without Landlock in
/// the kernel this does nothing (logged once); a failure to build the
/// ruleset is an error, so the child is never started believed confined
/// and not.
#[allow(unsafe_code)]
pub(crate) fn hide_paths(cmd: &mut Command, hidden: &[PathBuf]) -> std::io::Result<()> {
    if hidden.is_empty() {
        return Ok(());
    }
    let Some(abi) = landlock::abi() else {
        static ONCE: Once = Once::new();
        ONCE.call_once(|| {
            tracing::warn!(
                "this kernel has no Landlock (Linux 5.13+, enabled in the LSM list): stdio downstream servers can read the gateway's data directory"
            );
        });
        return Ok(());
    };
    let hidden: Vec<PathBuf> = hidden.iter().map(|p| resolved(p)).collect();
    if let Some((path, shared)) = hidden
        .iter()
        .find_map(|h| shared_ancestor(h).map(|a| (h, a)))
    {
        static ONCE: Once = Once::new();
        ONCE.call_once(|| {
            tracing::warn!(
                "{} is under {}, where every process creates files: stdio downstream servers are not kept out of it (they would lose the right to create files there too); put server.data_dir (and vault.key_file) elsewhere",
                path.display(),
                shared.display()
            );
        });
        return Ok(());
    }
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let on_the_way: Vec<String> = hidden
            .iter()
            .flat_map(|h| h.ancestors().skip(1))
            .map(|a| a.display().to_string())
            .collect();
        tracing::info!(
            "stdio downstream servers are kept out of {}; they cannot create new entries directly in {}",
            hidden
                .iter()
                .map(|h| h.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            on_the_way.join(", ")
        );
    });
    let ruleset = landlock::ruleset_hiding(abi, &hidden)?;
    let fd = ruleset.as_raw_fd();
    // SAFETY: the closure runs in the forked child before exec and makes
    // only two system calls (prctl, landlock_restrict_self) on an integer
    // prepared in the parent; it allocates nothing. The ruleset descriptor
    // stays open in the parent until `spawn` returns (it is moved into the
    // closure, which the command keeps) and closes at exec in the child.
    unsafe {
        cmd.pre_exec(move || {
            let _keep = &ruleset;
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::syscall(libc::SYS_landlock_restrict_self, fd, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    Ok(())
}

/// The Landlock system calls and the ruleset that hides paths. Constants
/// and structures are the kernel's UAPI (`linux/landlock.h`).
#[allow(unsafe_code)]
mod landlock {
    use super::*;

    const CREATE_RULESET_VERSION: u32 = 1;
    const RULE_PATH_BENEATH: libc::c_int = 1;

    const EXECUTE: u64 = 1 << 0;
    const WRITE_FILE: u64 = 1 << 1;
    const READ_FILE: u64 = 1 << 2;
    const READ_DIR: u64 = 1 << 3;
    /// ABI 1: everything up to `MAKE_SYM` (bit 12).
    const ABI1_ALL: u64 = (1 << 13) - 1;
    const REFER: u64 = 1 << 13;
    const TRUNCATE: u64 = 1 << 14;
    const IOCTL_DEV: u64 = 1 << 15;
    /// The rights that apply to a file (not a directory).
    const FILE_RIGHTS: u64 = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV;

    #[repr(C)]
    struct RulesetAttr {
        handled_access_fs: u64,
    }

    #[repr(C, packed)]
    struct PathBeneathAttr {
        allowed_access: u64,
        parent_fd: i32,
    }

    /// The Landlock ABI version the kernel offers, if any.
    pub(super) fn abi() -> Option<u32> {
        // SAFETY: the documented way to ask for the ABI version: no
        // attribute pointer, size 0, the version flag.
        let v = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<RulesetAttr>(),
                0usize,
                CREATE_RULESET_VERSION,
            )
        };
        u32::try_from(v).ok().filter(|v| *v >= 1)
    }

    /// Every filesystem right this ABI knows.
    fn handled(abi: u32) -> u64 {
        let mut rights = ABI1_ALL;
        if abi >= 2 {
            rights |= REFER;
        }
        if abi >= 3 {
            rights |= TRUNCATE;
        }
        if abi >= 5 {
            rights |= IOCTL_DEV;
        }
        rights
    }

    /// A ruleset that handles every filesystem right and grants them all on
    /// everything but `hidden` (absolute, resolved) and the directories on
    /// the way to it.
    pub(super) fn ruleset_hiding(abi: u32, hidden: &[PathBuf]) -> std::io::Result<OwnedFd> {
        let handled = handled(abi);
        let attr = RulesetAttr {
            handled_access_fs: handled,
        };
        // SAFETY: a valid attribute and its size; the result is a new
        // descriptor or -1.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                &attr as *const RulesetAttr,
                std::mem::size_of::<RulesetAttr>(),
                0u32,
            )
        };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: the kernel just returned this descriptor to us alone.
        let ruleset = unsafe { OwnedFd::from_raw_fd(fd as i32) };
        if hidden.iter().any(|h| h.parent().is_none()) {
            return Err(std::io::Error::other("cannot hide the root directory"));
        }
        let plan = super::grants(Path::new("/"), hidden)?;
        for (path, kind) in plan {
            let rights = match kind {
                Grant::Everything => handled,
                Grant::FileOnly => handled & FILE_RIGHTS,
                Grant::ListOnly => READ_DIR,
            };
            // An entry that cannot be granted (gone since the listing, or
            // refused by the kernel) is simply not granted: the child gets
            // less, never more.
            if let Err(e) = add_rule(&ruleset, &path, rights) {
                tracing::debug!(path = %path.display(), error = %e, "not granted to stdio children");
            }
        }
        Ok(ruleset)
    }

    fn add_rule(ruleset: &OwnedFd, path: &Path, rights: u64) -> std::io::Result<()> {
        use std::os::unix::fs::OpenOptionsExt;
        // O_PATH opens without reading; O_NOFOLLOW keeps a symlink swapped
        // in since the listing from leading the rule elsewhere.
        let target: OwnedFd = match std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_PATH | libc::O_NOFOLLOW)
            .open(path)
        {
            Ok(f) => f.into(),
            Err(e) => return Err(e),
        };
        let attr = PathBeneathAttr {
            allowed_access: rights,
            parent_fd: target.as_raw_fd(),
        };
        // SAFETY: a valid ruleset, rule type and packed attribute.
        let r = unsafe {
            libc::syscall(
                libc::SYS_landlock_add_rule,
                ruleset.as_raw_fd(),
                RULE_PATH_BENEATH,
                &attr as *const PathBeneathAttr,
                0u32,
            )
        };
        if r != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
}

/// What one path of the plan is granted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Grant {
    /// A directory off the way to every hidden path: everything beneath it.
    Everything,
    /// A file (or device, socket, fifo) off the way.
    FileOnly,
    /// A directory on the way to a hidden path: it may be listed, nothing
    /// more (a right on a directory covers everything beneath it, the
    /// hidden path included).
    ListOnly,
}

/// The grants that cover everything under `dir` but `hidden` (absolute,
/// symlinks resolved): each entry of a directory on the way to a hidden
/// path is granted whole, unless it is hidden or on the way itself, in
/// which case it is walked. Symlinks are not granted: what they point to
/// is reached, and judged, by its own path.
fn grants(dir: &Path, hidden: &[PathBuf]) -> std::io::Result<Vec<(PathBuf, Grant)>> {
    let mut out = vec![(dir.to_path_buf(), Grant::ListOnly)];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = match std::fs::read_dir(&d) {
            Ok(e) => e,
            // A directory on the way that cannot be listed: nothing of it
            // is granted but the listing right already given.
            Err(_) => continue,
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if hidden.iter().any(|h| h == &path) {
                continue;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_symlink() {
                continue;
            }
            if hidden.iter().any(|h| h.starts_with(&path)) {
                out.push((path.clone(), Grant::ListOnly));
                stack.push(path);
            } else if kind.is_dir() {
                out.push((path, Grant::Everything));
            } else {
                out.push((path, Grant::FileOnly));
            }
        }
    }
    Ok(out)
}

/// The nearest directory above `path` that is sticky and writable by
/// everyone (`/tmp`, `/var/tmp`, `/dev/shm`): every process creates files
/// there.
fn shared_ancestor(path: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    path.ancestors().skip(1).find_map(|a| {
        let mode = std::fs::metadata(a).ok()?.permissions().mode();
        (mode & 0o1002 == 0o1002).then(|| a.to_path_buf())
    })
}

/// `p` made absolute with symlinks resolved, as far as it exists (the rest
/// appended as written, without `.` or `..`).
fn resolved(p: &Path) -> PathBuf {
    let absolute = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(p)
    };
    let mut existing = absolute.clone();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            let mut out = real;
            for c in rest.iter().rev() {
                out.push(c);
            }
            return out;
        }
        match (
            existing.file_name().map(|n| n.to_os_string()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => {
                return absolute
                    .components()
                    .filter(|c| !matches!(c, Component::CurDir | Component::ParentDir))
                    .collect();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_grants_everything_but_the_hidden_path_and_lists_the_way_to_it() {
        let root = tempfile::tempdir().expect("tempdir");
        let r = root.path().canonicalize().expect("real");
        for d in ["a/data", "a/sibling", "b"] {
            std::fs::create_dir_all(r.join(d)).expect("dir");
        }
        std::fs::write(r.join("a/data/connecta.db"), "x").expect("file");
        std::fs::write(r.join("a/config.toml"), "x").expect("file");
        std::os::unix::fs::symlink(r.join("a/data"), r.join("b/link")).expect("link");
        let hidden = [r.join("a/data"), r.join("elsewhere/vault.key")];
        let plan = grants(&r, &hidden).expect("plan");
        let grant = |p: &str| {
            plan.iter()
                .find(|(path, _)| path == &r.join(p))
                .map(|(_, g)| *g)
        };
        assert_eq!(plan[0], (r.clone(), Grant::ListOnly));
        assert_eq!(grant("a"), Some(Grant::ListOnly));
        assert_eq!(grant("a/sibling"), Some(Grant::Everything));
        assert_eq!(grant("a/config.toml"), Some(Grant::FileOnly));
        assert_eq!(grant("b"), Some(Grant::Everything));
        assert_eq!(grant("a/data"), None);
        assert_eq!(grant("a/data/connecta.db"), None);
        assert_eq!(grant("b/link"), None, "symlinks are never granted");
    }

    #[test]
    fn a_data_dir_under_a_directory_everyone_writes_to_is_recognized() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().expect("tempdir");
        let r = root.path().canonicalize().expect("real");
        let shared = r.join("shared");
        std::fs::create_dir_all(shared.join("gw/data")).expect("dirs");
        std::fs::create_dir_all(r.join("own/data")).expect("dirs");
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).expect("chmod");
        std::fs::set_permissions(&r, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        assert_eq!(
            shared_ancestor(&shared.join("gw/data")),
            Some(shared.clone())
        );
        // The temporary directory itself may live under /tmp: only look
        // below it.
        let below_root = |p: &Path| shared_ancestor(p).filter(|a| a.starts_with(&r));
        assert_eq!(below_root(&r.join("own/data")), None);
    }

    #[test]
    fn hidden_paths_are_resolved_as_far_as_they_exist() {
        let root = tempfile::tempdir().expect("tempdir");
        let real = root.path().canonicalize().expect("real");
        std::fs::create_dir(real.join("x")).expect("dir");
        std::os::unix::fs::symlink(real.join("x"), real.join("via")).expect("link");
        assert_eq!(resolved(&real.join("via/new/key")), real.join("x/new/key"));
        assert_eq!(resolved(&real.join("via")), real.join("x"));
    }
}
