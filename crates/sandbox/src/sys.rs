//! The crate's only `unsafe` code: two process-level operations and one
//! engine reading the safe wrappers cannot express.
//!
//! - [`worker_pre_exec`] installs the child-side setup between `fork` and
//!   `exec` of a worker (`Command::pre_exec` is `unsafe` because the closure
//!   runs in a forked copy of a multi-threaded process, where only
//!   async-signal-safe calls are allowed).
//! - [`close_inherited_fds`] closes every descriptor above stderr in the
//!   worker; closing a descriptor by number has no safe API.
//! - [`gc_threshold`] reads the engine's collection threshold, which
//!   `rquickjs` can set but not read: how an exhausted heap is told from a
//!   program that threw `null`.
//!
//! Must never: grow beyond these. Everything else uses `nix`, `seccompiler`
//! and `rquickjs`' safe surfaces.
#![allow(unsafe_code)]

/// Makes the spawned worker die with its parent (`PR_SET_PDEATHSIG` =
/// `SIGKILL`), closing the race where the parent died before the call.
///
/// The death signal fires when the *thread* that forked the child exits, so
/// workers must be spawned from long-lived threads (tokio runtime workers),
/// never from `spawn_blocking` threads that retire when idle.
#[cfg(target_os = "linux")]
pub fn worker_pre_exec(command: &mut tokio::process::Command) {
    let parent = nix::unistd::getpid();
    // SAFETY: the closure calls only `prctl` and `getppid`, both
    // async-signal-safe, and builds its error without allocating.
    unsafe {
        command.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)
                .map_err(|e| std::io::Error::from_raw_os_error(e as i32))?;
            if nix::unistd::getppid() != parent {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
pub fn worker_pre_exec(_command: &mut tokio::process::Command) {}

/// Closes every file descriptor above 2, so nothing the gateway leaked
/// without `O_CLOEXEC` stays reachable in the worker.
#[cfg(target_os = "linux")]
pub fn close_inherited_fds() {
    // SAFETY: `close_range` only closes descriptors; nothing in this
    // single-threaded worker holds descriptors above 2 at this point (its
    // pipes are 0 and 1, diagnostics go to 2).
    let rc = unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) };
    if rc == 0 {
        return;
    }
    // Kernels before 5.9: close what /proc lists.
    let fds: Vec<i32> = std::fs::read_dir("/proc/self/fd")
        .map(|dir| {
            dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .filter(|fd| *fd > 2)
                .collect()
        })
        .unwrap_or_default();
    for fd in fds {
        // SAFETY: as above; a descriptor already closed (the directory's
        // own) yields EBADF, which is harmless.
        unsafe {
            libc::close(fd);
        }
    }
}

/// The engine's next garbage-collection threshold: after a collection it
/// is one and a half times the heap that survived, and an object is never
/// allocated above it without a collection first. So when the heap ran out
/// even for the engine's own error object, it is at least the heap limit.
pub fn gc_threshold(ctx: &rquickjs::Ctx<'_>) -> usize {
    // SAFETY: `ctx` is a live context of this thread, so its runtime is
    // live; `JS_GetGCThreshold` only reads one field of it.
    unsafe {
        let rt = rquickjs::qjs::JS_GetRuntime(ctx.as_raw().as_ptr());
        rquickjs::qjs::JS_GetGCThreshold(rt) as usize
    }
}
