//! How busy the machine was while a shape was measured (Linux only): the
//! load average and the compilers running at either end, and over the
//! window the share of every core that was busy and the share this run did
//! not account for (other users' work). A figure from a busy shared machine
//! is still a figure, but the report must say the machine was busy.

use serde::Serialize;

/// The load average and the busy processes at one moment.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadSnapshot {
    /// `/proc/loadavg`: 1, 5 and 15 minute averages.
    pub loadavg: [f64; 3],
    /// Runnable tasks right now (the fourth field's numerator).
    pub runnable: u32,
    /// Compiler processes running on the machine (`rustc`, `cc1`, `ld`…):
    /// another engineer's build sharing the cores.
    pub compilers: usize,
}

/// A window of time: where it started, where it ended, and what the cores
/// did in between.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadWindow {
    pub before: LoadSnapshot,
    pub after: LoadSnapshot,
    /// Busy time of all cores over the window, as a percentage of their
    /// capacity (100% = every core busy throughout).
    pub busy_percent: Option<f64>,
    /// The part of `busy_percent` not spent by this run (this process and
    /// the children it has reaped: servers, their workers, downstreams).
    pub others_percent: Option<f64>,
}

/// The start of a window.
#[derive(Debug, Clone)]
pub struct WindowStart {
    snapshot: LoadSnapshot,
    cpu: Option<SystemCpu>,
    own_seconds: Option<f64>,
}

/// Jiffies of every core, from the `cpu` line of `/proc/stat`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SystemCpu {
    pub busy: u64,
    pub total: u64,
}

/// USER_HZ, fixed at 100 by the kernel ABI.
const TICKS_PER_SECOND: f64 = 100.0;

const COMPILERS: &[&str] = &["rustc", "cc1", "cc1plus", "ld", "ld.lld", "lld", "clang"];

impl WindowStart {
    pub fn now() -> Self {
        Self {
            snapshot: snapshot(),
            cpu: system_cpu(),
            own_seconds: own_cpu_seconds(),
        }
    }

    /// The window from this start to now.
    pub fn finish(&self) -> LoadWindow {
        let cpu = system_cpu();
        let own = own_cpu_seconds();
        let window = self.cpu.zip(cpu).and_then(|(a, b)| {
            let total = b.total.checked_sub(a.total)?;
            let busy = b.busy.checked_sub(a.busy)?;
            (total > 0).then_some((busy, total))
        });
        let busy_percent = window.map(|(busy, total)| busy as f64 * 100.0 / total as f64);
        let others_percent =
            window
                .zip(self.own_seconds.zip(own))
                .map(|((busy, total), (a, b))| {
                    let own_ticks = (b - a) * TICKS_PER_SECOND;
                    ((busy as f64 - own_ticks).max(0.0) * 100.0 / total as f64).min(100.0)
                });
        LoadWindow {
            before: self.snapshot.clone(),
            after: snapshot(),
            busy_percent,
            others_percent,
        }
    }
}

/// The load average and the compilers running now.
pub fn snapshot() -> LoadSnapshot {
    let (loadavg, runnable) = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|text| parse_loadavg(&text))
        .unwrap_or(([0.0; 3], 0));
    LoadSnapshot {
        loadavg,
        runnable,
        compilers: count_processes(COMPILERS),
    }
}

/// `/proc/loadavg`: "0.52 0.58 0.59 2/467 12345".
pub fn parse_loadavg(text: &str) -> Option<([f64; 3], u32)> {
    let mut fields = text.split_whitespace();
    let mut avg = [0.0; 3];
    for slot in &mut avg {
        *slot = fields.next()?.parse().ok()?;
    }
    let runnable = fields.next()?.split_once('/')?.0.parse().ok()?;
    Some((avg, runnable))
}

/// The aggregate `cpu` line of `/proc/stat`: busy is everything but idle
/// and iowait; guest time is already inside user time and is not added.
pub fn parse_proc_stat(text: &str) -> Option<SystemCpu> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let values: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .take(8)
        .map(|v| v.parse().ok())
        .collect::<Option<_>>()?;
    let total: u64 = values.iter().sum();
    let idle = values.get(3)? + values.get(4)?;
    Some(SystemCpu {
        busy: total - idle,
        total,
    })
}

fn system_cpu() -> Option<SystemCpu> {
    parse_proc_stat(&std::fs::read_to_string("/proc/stat").ok()?)
}

/// This process's CPU plus its reaped children's (fields 14–17).
fn own_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = fields
        .get(11..15)?
        .iter()
        .map(|f| f.parse::<u64>().ok())
        .sum::<Option<u64>>()?;
    Some(ticks as f64 / TICKS_PER_SECOND)
}

/// Processes whose command name is one of `names`.
fn count_processes(names: &[&str]) -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter_map(|e| std::fs::read_to_string(e.path().join("comm")).ok())
        .filter(|comm| names.contains(&comm.trim()))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loadavg_has_three_averages_and_the_runnable_count() {
        assert_eq!(
            parse_loadavg("0.52 1.50 3.25 4/467 12345\n"),
            Some(([0.52, 1.5, 3.25], 4))
        );
        assert_eq!(parse_loadavg("0.52 1.50"), None);
    }

    #[test]
    fn idle_and_iowait_are_not_busy() {
        // user nice system idle iowait irq softirq steal guest guest_nice
        let stat = "cpu  100 5 50 800 40 3 2 0 7 0\ncpu0 50 2 25 400 20 1 1 0 3 0\n";
        assert_eq!(
            parse_proc_stat(stat),
            Some(SystemCpu {
                busy: 160,
                total: 1000
            })
        );
        assert_eq!(parse_proc_stat("intr 1 2 3"), None);
    }

    #[test]
    fn a_window_on_this_machine_is_a_percentage() {
        let start = WindowStart::now();
        // Burn a little CPU so the window is not empty.
        let mut x = 0u64;
        for i in 0..5_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        std::thread::sleep(std::time::Duration::from_millis(30));
        let window = start.finish();
        let busy = window.busy_percent.expect("/proc/stat is readable");
        assert!((0.0..=100.0).contains(&busy), "{busy}");
        let others = window.others_percent.expect("own CPU is readable");
        assert!(others <= busy + f64::EPSILON, "{others} > {busy}");
    }
}
