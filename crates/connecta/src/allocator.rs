//! The binary's only `unsafe` code: how many malloc arenas the gateway's
//! threads may spread over, and giving freed memory back to the system.
//!
//! glibc gives each thread that meets a locked arena a new one, up to
//! eight per core, and each arena keeps the peak of what was freed in it.
//! The gateway's many short-lived threads (tokio workers, blocking pool,
//! SQLite workers) so held a few MB more after a load (median 76 MB
//! against 70 at 10,000 tools), with no measurable gain in throughput on
//! this workload (docs/performance.md). One arena per core is the cap.
//!
//! A request that briefly needed many MB (a large JSON-RPC batch) leaves
//! that memory free inside the arenas, where glibc keeps it; the server
//! calls [`release_free_memory`] after such a request so RSS returns to
//! where it was.
//!
//! Must never: do more than these two calls.
#![allow(unsafe_code)]

/// Caps glibc's malloc arenas at one per available core (two at least),
/// unless the operator chose a number with `MALLOC_ARENA_MAX` or
/// `GLIBC_TUNABLES=glibc.malloc.arena_max=N`, which glibc reads itself.
/// Call before any thread is spawned.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn cap_malloc_arenas() {
    if operator_chose(
        std::env::var_os("MALLOC_ARENA_MAX").is_some(),
        std::env::var("GLIBC_TUNABLES").ok().as_deref(),
    ) {
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

/// Returns the free memory of every arena to the system.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn release_free_memory() {
    // SAFETY: `malloc_trim` only releases free pages of the allocator's
    // own arenas, under their locks; it is safe from any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn release_free_memory() {}

/// Whether the environment sets the arena count: `MALLOC_ARENA_MAX`, or
/// `arena_max` among the colon-separated `GLIBC_TUNABLES`.
#[cfg_attr(not(all(target_os = "linux", target_env = "gnu")), allow(dead_code))]
fn operator_chose(arena_max_set: bool, tunables: Option<&str>) -> bool {
    arena_max_set
        || tunables.is_some_and(|t| {
            t.split(':')
                .any(|setting| setting.trim().starts_with("glibc.malloc.arena_max="))
        })
}

#[cfg(test)]
mod tests {
    use super::operator_chose;

    #[test]
    fn an_arena_count_the_operator_set_is_left_alone() {
        assert!(!operator_chose(false, None));
        assert!(operator_chose(true, None));
        assert!(operator_chose(false, Some("glibc.malloc.arena_max=4")));
        assert!(operator_chose(
            false,
            Some("glibc.malloc.trim_threshold=128:glibc.malloc.arena_max=1")
        ));
        // Other tunables leave the cap on.
        assert!(!operator_chose(false, Some("glibc.malloc.tcache_count=0")));
        assert!(!operator_chose(false, Some("glibc.malloc.arena_test=2")));
    }
}
