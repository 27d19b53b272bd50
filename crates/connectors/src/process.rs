//! The one place this crate needs `unsafe`: asking the kernel to kill a child
//! process when the gateway dies, so even a SIGKILLed gateway leaves no
//! orphaned downstream servers.

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
