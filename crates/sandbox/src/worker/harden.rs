//! Worker self-hardening (Linux): no new privileges, rlimits, and a seccomp
//! allowlist, applied once after the engine is initialised and before the
//! first program.
//!
//! This module owns the list of system calls a worker may make. Everything
//! not listed fails with `EPERM`: in particular every call that opens a path
//! (`open`, `openat`, `openat2`, `creat`, …), creates a socket or connects,
//! executes or forks (`execve`, `execveat`, `fork`, `vfork`, `clone`,
//! `clone3`), traces, mounts, or signals another process. Errors rather than
//! kills keep the refusal observable (the self-check relies on it) and turn a
//! probing exploit into a stream of failures instead of a crash loop.
//!
//! Why no landlock: the allowlist admits no system call that takes a path, so
//! a landlock ruleset would only restrict what seccomp already refuses, at
//! the price of a dependency and a kernel-version-dependent code path.
//!
//! Must never: be loosened to make a program work. A program has no way to
//! ask for a system call; a new entry here is justified only by the worker's
//! own runtime needs (allocator, clock, pipes, exit), with a reason.

use std::collections::BTreeMap;

use nix::sys::resource::{Resource, setrlimit};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};

use crate::protocol::{HardeningReport, WorkerLimits};

#[derive(Debug, thiserror::Error)]
pub enum HardenError {
    #[error("prctl(PR_SET_NO_NEW_PRIVS): {0}")]
    NoNewPrivs(nix::Error),
    #[error("leaving root ({0}): {1}")]
    LeaveRoot(&'static str, nix::Error),
    #[error("setrlimit({resource}): {source}")]
    Rlimit {
        resource: &'static str,
        source: nix::Error,
    },
    #[error(
        "the worker has {0} threads; seccomp filters only the calling thread, so \
         `worker_main` must run before any other thread (or async runtime) starts"
    )]
    Threads(u64),
    #[error("seccomp: {0}")]
    Seccomp(#[from] seccompiler::Error),
    #[error("seccomp filter: {0}")]
    Backend(#[from] seccompiler::BackendError),
}

/// Calls the worker needs after hardening, each with its reason.
const ALLOWED: &[(i64, &str)] = &[
    (libc::SYS_read, "frames from the parent"),
    (
        libc::SYS_write,
        "frames to the parent, diagnostics to stderr",
    ),
    (libc::SYS_readv, "std's vectored reads"),
    (libc::SYS_writev, "std's vectored writes"),
    (libc::SYS_close, "closing is harmless"),
    (libc::SYS_munmap, "allocator"),
    (libc::SYS_mremap, "allocator"),
    (libc::SYS_brk, "allocator"),
    (libc::SYS_madvise, "allocator"),
    (libc::SYS_futex, "std synchronisation primitives"),
    (libc::SYS_clock_gettime, "the CPU budget's thread clock"),
    (libc::SYS_clock_getres, "clock queries"),
    (libc::SYS_gettimeofday, "Date"),
    (libc::SYS_getrandom, "Math.random seeding, hash seeds"),
    (libc::SYS_exit, "exit"),
    (libc::SYS_exit_group, "exit"),
    (libc::SYS_rt_sigreturn, "signal return"),
    (libc::SYS_rt_sigprocmask, "abort path"),
    (libc::SYS_rt_sigaction, "abort path"),
    (libc::SYS_sigaltstack, "stack-overflow guard"),
    (libc::SYS_sched_yield, "spin loops in std"),
    (libc::SYS_getpid, "own pid"),
    (libc::SYS_gettid, "own tid"),
    (libc::SYS_restart_syscall, "restarted reads"),
];

/// Applies all hardening to the current (single-threaded) process.
pub fn apply(limits: &WorkerLimits) -> Result<HardeningReport, HardenError> {
    let mut report = HardeningReport::default();
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let threads = status_field(&status, "Threads:").unwrap_or(1);
    if threads != 1 {
        return Err(HardenError::Threads(threads));
    }

    crate::sys::close_inherited_fds();
    // A gateway run as root would hand its workers every capability; the
    // seccomp filter refuses what they could be used for, and this takes
    // them away as well. Changing every uid away from 0 clears them.
    // Root without capabilities (a container started with all of them
    // dropped) has nothing to give up, and could not change uid anyway.
    let has_caps = ["CapPrm:", "CapEff:"]
        .iter()
        .any(|f| cap_field(&status, f).is_some_and(|c| c != 0));
    if nix::unistd::geteuid().is_root() && has_caps {
        let parent = nix::unistd::getppid();
        let nobody_gid = nix::unistd::Gid::from_raw(NOBODY);
        let nobody_uid = nix::unistd::Uid::from_raw(NOBODY);
        nix::unistd::setgroups(&[]).map_err(|e| HardenError::LeaveRoot("setgroups", e))?;
        nix::unistd::setresgid(nobody_gid, nobody_gid, nobody_gid)
            .map_err(|e| HardenError::LeaveRoot("setresgid", e))?;
        nix::unistd::setresuid(nobody_uid, nobody_uid, nobody_uid)
            .map_err(|e| HardenError::LeaveRoot("setresuid", e))?;
        // A change of credentials clears the parent-death signal: set it
        // again, then make sure the parent did not die in between.
        nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)
            .map_err(|e| HardenError::LeaveRoot("prctl(PR_SET_PDEATHSIG)", e))?;
        if nix::unistd::getppid() != parent {
            return Err(HardenError::LeaveRoot(
                "the parent exited meanwhile",
                nix::Error::ESRCH,
            ));
        }
        report.left_root = true;
    }
    let after = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    report.no_capabilities = ["CapInh:", "CapPrm:", "CapEff:", "CapAmb:"]
        .iter()
        .all(|f| cap_field(&after, f) == Some(0));
    nix::sys::prctl::set_no_new_privs().map_err(HardenError::NoNewPrivs)?;
    report.no_new_privs = true;

    let address_space = status_field(&status, "VmSize:")
        .map_or(256 * 1024 * 1024, |kb| kb * 1024)
        .saturating_add(limits.heap_bytes as u64)
        .saturating_add(limits.address_space_margin_bytes as u64);
    for (resource, name, value) in [
        (Resource::RLIMIT_CORE, "RLIMIT_CORE", 0),
        (Resource::RLIMIT_FSIZE, "RLIMIT_FSIZE", 0),
        // stdin, stdout, stderr: nothing more may be opened.
        (Resource::RLIMIT_NOFILE, "RLIMIT_NOFILE", 3),
        (Resource::RLIMIT_AS, "RLIMIT_AS", address_space),
    ] {
        setrlimit(resource, value, value).map_err(|source| HardenError::Rlimit {
            resource: name,
            source,
        })?;
    }
    report.rlimits = true;
    report.address_space_limit = Some(address_space);

    let program = filter()?;
    seccompiler::apply_filter(&program)?;
    report.seccomp = true;
    Ok(report)
}

/// The allowlist as a BPF program. Unlisted calls fail with `EPERM`.
pub fn filter() -> Result<BpfProgram, HardenError> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for (nr, _why) in ALLOWED {
        rules.insert(*nr, Vec::new());
    }
    // Memory may be mapped and re-protected, never made executable: the
    // engine is an interpreter and nothing in the worker generates code.
    let no_exec = || -> Result<Vec<SeccompRule>, HardenError> {
        Ok(vec![SeccompRule::new(vec![SeccompCondition::new(
            2,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::MaskedEq(libc::PROT_EXEC as u64),
            0,
        )?])?])
    };
    rules.insert(libc::SYS_mmap, no_exec()?);
    rules.insert(libc::SYS_mprotect, no_exec()?);
    // Signals only to itself (abort() raises SIGABRT this way).
    rules.insert(
        libc::SYS_tgkill,
        vec![SeccompRule::new(vec![SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Eq,
            u64::from(std::process::id()),
        )?])?],
    );
    let arch: seccompiler::TargetArch = std::env::consts::ARCH.try_into()?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Errno(libc::EPERM as u32),
        SeccompAction::Allow,
        arch,
    )?;
    Ok(filter.try_into()?)
}

/// uid and gid of `nobody` on Linux.
const NOBODY: u32 = 65_534;

/// A capability mask from `/proc/self/status` (hexadecimal).
fn cap_field(status: &str, name: &str) -> Option<u64> {
    status.lines().find_map(|l| {
        let value = l.strip_prefix(name)?.trim();
        u64::from_str_radix(value, 16).ok()
    })
}

/// A numeric field of `/proc/self/status` (`VmSize:` is in kB).
fn status_field(status: &str, name: &str) -> Option<u64> {
    status.lines().find_map(|l| {
        let value = l.strip_prefix(name)?.trim();
        value.trim_end_matches("kB").trim().parse().ok()
    })
}
