//! The binary's only `unsafe` code: which allocator serves its Rust
//! allocations, how many malloc arenas the C libraries' threads may spread
//! over, and giving freed memory back to the system.
//!
//! Rust allocations go to jemalloc (prefixed symbols, so SQLite, QuickJS
//! and aws-lc keep glibc's malloc). Through a benchmark run the gateway
//! spent about a seventh of its CPU in glibc's malloc and free; with
//! jemalloc it answered 11–58% more calls/s at 64 in flight in eight of
//! nine same-run comparisons (2% fewer in one, at 100 tools), with RSS
//! after load within a few percent at 100 tools and lower at 10,000
//! (docs/performance.md, "The allocator"). Its configuration, the one
//! measured: two arenas (jemalloc's default is four per core) and dirty
//! pages returned after a second instead of ten. The gateway
//! starts one background thread that returns them
//! ([`start_background_purge`]), so an idle gateway gives back the peak of
//! a catalog load without waiting for its next allocation; a sandbox
//! worker (the same binary) never starts it: it must stay single-threaded
//! to harden itself.
//!
//! glibc gives each thread that meets a locked arena a new one, up to
//! eight per core, and each arena keeps the peak of what was freed in it;
//! its arenas are capped at one per core.
//!
//! A request that briefly needed many MB (a large JSON-RPC batch) leaves
//! that memory free inside the arenas; the server calls
//! [`release_free_memory`] after such a request so RSS returns to where it
//! was.
//!
//! Built with the `system-allocator` feature, Rust allocations stay on the
//! system's malloc (jemalloc is still linked and configured, and `serve`
//! still starts its background thread, but it serves no Rust
//! allocation), so a heap profiler that follows malloc sees them:
//! `scripts/heap-after-load`.
//!
//! Must never: do more than choose, tune and purge the allocators.
#![allow(unsafe_code)]

#[cfg(all(unix, not(feature = "system-allocator")))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's options, read at its first allocation (`_RJEM_MALLOC_CONF`
/// in the environment overrides them).
#[cfg(unix)]
#[allow(non_upper_case_globals)]
#[unsafe(export_name = "_rjem_malloc_conf")]
pub static malloc_conf: &[u8; 72] =
    b"narenas:2,dirty_decay_ms:1000,muzzy_decay_ms:0,max_background_threads:1\0";

/// Starts jemalloc's background thread, which returns dirty pages once
/// they have been unused for `dirty_decay_ms`, whether or not anything
/// allocates. For the gateway only: never in a sandbox worker.
#[cfg(unix)]
pub fn start_background_purge() {
    let mut on = true;
    // SAFETY: a NUL-terminated name and a new value of the type jemalloc
    // documents for `background_thread` (bool). A refusal (no thread
    // support) leaves purging to allocation, as without this call.
    unsafe {
        tikv_jemalloc_sys::mallctl(
            c"background_thread".as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            (&raw mut on).cast(),
            std::mem::size_of::<bool>(),
        );
    }
}

#[cfg(not(unix))]
pub fn start_background_purge() {}

/// Stops (and joins) jemalloc's background thread if anything started it
/// (an `/etc/_rjem_malloc.conf` of the host, say): a sandbox worker hardens
/// itself only while it is single-threaded. Called first in worker mode.
#[cfg(unix)]
pub fn stop_background_purge() {
    let mut on = false;
    // SAFETY: as in `start_background_purge`, with `false`.
    unsafe {
        tikv_jemalloc_sys::mallctl(
            c"background_thread".as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            (&raw mut on).cast(),
            std::mem::size_of::<bool>(),
        );
    }
}

#[cfg(not(unix))]
pub fn stop_background_purge() {}

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

/// Returns the free memory of every arena, jemalloc's and glibc's, to the
/// system.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn release_free_memory() {
    purge_jemalloc();
    // SAFETY: `malloc_trim` only releases free pages of the allocator's
    // own arenas, under their locks; it is safe from any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(all(unix, not(all(target_os = "linux", target_env = "gnu"))))]
pub fn release_free_memory() {
    purge_jemalloc();
}

/// `arena.<MALLCTL_ARENAS_ALL>.purge`: every arena's unused dirty pages
/// back to the system now.
#[cfg(unix)]
fn purge_jemalloc() {
    const PURGE_ALL: &std::ffi::CStr = c"arena.4096.purge";
    // SAFETY: a NUL-terminated control name, and no old or new value:
    // `purge` takes none. A failure (an unknown name) changes nothing.
    unsafe {
        tikv_jemalloc_sys::mallctl(
            PURGE_ALL.as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
        );
    }
}

#[cfg(not(unix))]
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

    /// A jemalloc option as this process's jemalloc read it.
    #[cfg(all(unix, not(feature = "system-allocator")))]
    fn jemalloc_option<T: Default>(name: &std::ffi::CStr) -> T {
        let mut value = T::default();
        let mut len = std::mem::size_of::<T>();
        // SAFETY: a NUL-terminated name and an out-parameter of the type
        // jemalloc documents for it (checked: it writes back its size).
        let rc = unsafe {
            tikv_jemalloc_sys::mallctl(
                name.as_ptr(),
                (&raw mut value).cast(),
                &raw mut len,
                std::ptr::null_mut(),
                0,
            )
        };
        assert_eq!(rc, 0, "mallctl({name:?}) failed");
        assert_eq!(len, std::mem::size_of::<T>());
        value
    }

    /// The jemalloc linked in read `malloc_conf` (its defaults: four arenas
    /// per core, dirty pages kept ten seconds), starts with no background
    /// thread (as a sandbox worker must), starts one when asked and stops
    /// it again; a purge of every arena is accepted. (That it serves the
    /// Rust allocations is the `#[global_allocator]` above, a declaration.)
    #[cfg(all(unix, not(feature = "system-allocator")))]
    #[test]
    fn jemalloc_reads_its_configuration_and_runs_its_purge_thread_when_asked() {
        let held: Vec<Vec<u8>> = (0..64).map(|i| vec![i; 4096]).collect();
        assert_eq!(jemalloc_option::<u32>(c"opt.narenas"), 2);
        assert_eq!(jemalloc_option::<isize>(c"opt.dirty_decay_ms"), 1000);
        assert_eq!(jemalloc_option::<isize>(c"opt.muzzy_decay_ms"), 0);
        assert!(!jemalloc_option::<bool>(c"opt.background_thread"));
        assert!(!jemalloc_option::<bool>(c"background_thread"));
        assert_eq!(jemalloc_option::<usize>(c"opt.max_background_threads"), 1);
        super::start_background_purge();
        assert!(jemalloc_option::<bool>(c"background_thread"));
        super::stop_background_purge();
        assert!(!jemalloc_option::<bool>(c"background_thread"));
        drop(held);
        super::release_free_memory();
    }

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
