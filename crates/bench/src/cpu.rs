//! CPU time of a process tree, read from `/proc/<pid>/stat` (Linux only).
//! Sampled before and after a load level, it gives CPU per call: which
//! process the time goes to (the gateway, its workers, the downstream)
//! when wall-clock latency only says that it went somewhere.

use std::io;

use crate::rss::descendants;

/// `/proc` reports times in USER_HZ, which the kernel ABI fixes at 100 on
/// every architecture Linux exposes it for.
const TICKS_PER_SECOND: f64 = 100.0;

/// User + system ticks from a `/proc/<pid>/stat` line (fields 14 and 15,
/// counted past the parenthesised command name).
pub fn parse_stat_cpu_ticks(stat: &str) -> Option<u64> {
    let after = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    // `after` starts at field 3 (state): field n is at index n - 3.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// CPU seconds used so far by `pid`.
pub fn cpu_seconds(pid: u32) -> io::Result<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    parse_stat_cpu_ticks(&stat)
        .map(|ticks| ticks as f64 / TICKS_PER_SECOND)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "unreadable /proc stat"))
}

/// CPU seconds used so far by `pid` and its live descendants.
pub fn tree_cpu_seconds(pid: u32) -> io::Result<f64> {
    let mut total = cpu_seconds(pid)?;
    for child in descendants(pid)? {
        // A child may exit between the listing and the read.
        total += cpu_seconds(child).unwrap_or(0.0);
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::parse_stat_cpu_ticks;

    #[test]
    fn user_and_system_ticks_are_summed() {
        // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime …
        let stat = "42 (a (b) c) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 4 0";
        assert_eq!(parse_stat_cpu_ticks(stat), Some(300));
        assert_eq!(parse_stat_cpu_ticks("42 (x) S 1"), None);
    }
}
