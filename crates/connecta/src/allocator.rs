//! The binary's only `unsafe` code: how many malloc arenas the gateway's
//! threads may spread over.
//!
//! glibc gives each thread that meets a locked arena a new one, up to
//! eight per core, and each arena keeps the peak of what was freed in it.
//! The gateway's many short-lived threads (tokio workers, blocking pool,
//! SQLite workers) so held about 20 MB more after a load than they used,
//! with no measurable gain in throughput on this workload (docs/
//! performance.md). One arena per core is the cap.
//!
//! Must never: do more than this one call.
#![allow(unsafe_code)]

/// Caps glibc's malloc arenas at one per available core (two at least),
/// unless the operator chose a number with `MALLOC_ARENA_MAX`, which
/// glibc reads itself. Call before any thread is spawned.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn cap_malloc_arenas() {
    if std::env::var_os("MALLOC_ARENA_MAX").is_some() {
        return;
    }
    let cores = std::thread::available_parallelism().map_or(2, std::num::NonZero::get);
    let arenas = i32::try_from(cores.max(2)).unwrap_or(i32::MAX);
    // SAFETY: `mallopt` only sets an allocator parameter; it is called
    // before the process starts any thread, and a refusal (0) leaves
    // glibc's default in place.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, arenas);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn cap_malloc_arenas() {}
