//! Resident memory of a server and of the processes it started, read from
//! `/proc` (Linux only). The server is one pid; its descendants are split
//! into sandbox workers (command line contains `__sandbox-worker`) and other
//! children (stdio connectors, helpers), because the bars treat them apart.

use std::collections::{HashMap, HashSet};
use std::io;

use serde::Serialize;

/// The marker in a sandbox worker's command line.
pub const SANDBOX_WORKER_MARK: &str = "__sandbox-worker";

/// `VmRSS` of `/proc/<pid>/status`, in bytes.
pub fn parse_vm_rss(status: &str) -> Option<u64> {
    parse_status_bytes(status, "VmRSS:")
}

/// `RssFile` of `/proc/<pid>/status`, in bytes: the resident pages mapped
/// from files (the binary's code and data, shared libraries), which `VmRSS`
/// counts with the heap.
pub fn parse_rss_file(status: &str) -> Option<u64> {
    parse_status_bytes(status, "RssFile:")
}

fn parse_status_bytes(status: &str, key: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with(key))?;
    let mut fields = line[key.len()..].split_whitespace();
    let value: u64 = fields.next()?.parse().ok()?;
    let factor = match fields.next() {
        Some("kB") | None => 1024,
        Some("mB") | Some("MB") => 1024 * 1024,
        Some("B") => 1,
        Some(_) => return None,
    };
    Some(value * factor)
}

/// The parent pid in a `/proc/<pid>/stat` line. The command name (field 2)
/// is in parentheses and may itself contain spaces and parentheses, so the
/// fields are counted from the last `)`.
pub fn parse_stat_ppid(stat: &str) -> Option<u32> {
    let after = &stat[stat.rfind(')')? + 1..];
    let mut fields = after.split_whitespace();
    let _state = fields.next()?;
    fields.next()?.parse().ok()
}

/// Resident bytes of `pid`.
pub fn rss_bytes(pid: u32) -> io::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    parse_vm_rss(&status).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("no VmRSS for pid {pid} (a zombie or a kernel thread)"),
        )
    })
}

/// The command line of `pid`, arguments joined by spaces.
pub fn cmdline(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|raw| {
            raw.split(|&b| b == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

/// Every live process's parent, from one pass over `/proc`.
fn parents() -> io::Result<HashMap<u32, u32>> {
    let mut map = HashMap::new();
    for entry in std::fs::read_dir("/proc")? {
        let Ok(entry) = entry else { continue };
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        // A process may exit between the listing and the read.
        if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            && let Some(ppid) = parse_stat_ppid(&stat)
        {
            map.insert(pid, ppid);
        }
    }
    Ok(map)
}

/// All descendants of `root` (not `root` itself), breadth first.
pub fn descendants(root: u32) -> io::Result<Vec<u32>> {
    let parents = parents()?;
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for (&pid, &ppid) in &parents {
        children.entry(ppid).or_default().push(pid);
    }
    let mut out = Vec::new();
    let mut seen = HashSet::from([root]);
    let mut queue = vec![root];
    while let Some(pid) = queue.pop() {
        let mut kids = children.get(&pid).cloned().unwrap_or_default();
        kids.sort_unstable();
        for kid in kids {
            if seen.insert(kid) {
                out.push(kid);
                queue.push(kid);
            }
        }
    }
    Ok(out)
}

/// One process's memory.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessMemory {
    pub pid: u32,
    pub rss_bytes: u64,
    /// Of `rss_bytes`, the pages mapped from files (absent where the
    /// kernel does not say).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_bytes: Option<u64>,
    /// The command line, shortened for the report.
    pub command: String,
}

impl ProcessMemory {
    fn read(pid: u32) -> Option<Self> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let rss_bytes = parse_vm_rss(&status)?;
        let file_bytes = parse_rss_file(&status);
        let mut command = cmdline(pid);
        if command.len() > 160 {
            let cut = (0..=160)
                .rev()
                .find(|&i| command.is_char_boundary(i))
                .unwrap_or(0);
            command.truncate(cut);
            command.push('…');
        }
        Some(Self {
            pid,
            rss_bytes,
            file_bytes,
            command,
        })
    }
}

/// The memory of a server's process tree at one moment.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TreeMemory {
    /// The server process itself.
    pub server: ProcessMemory,
    /// Descendants whose command line carries [`SANDBOX_WORKER_MARK`].
    pub sandbox_workers: Vec<ProcessMemory>,
    /// Every other descendant.
    pub other_children: Vec<ProcessMemory>,
    /// The launched wrapper, when the server is not the launched process
    /// (its memory includes an in-process synthetic downstream).
    pub launcher: Option<ProcessMemory>,
}

impl TreeMemory {
    pub fn workers_total(&self) -> u64 {
        self.sandbox_workers.iter().map(|p| p.rss_bytes).sum()
    }

    pub fn other_children_total(&self) -> u64 {
        self.other_children.iter().map(|p| p.rss_bytes).sum()
    }
}

/// Read the tree rooted at `server`. `launcher` is the launched process when
/// it differs from `server`.
pub fn snapshot(server: u32, launcher: Option<u32>) -> io::Result<TreeMemory> {
    let server_memory = ProcessMemory::read(server).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!("server pid {server} is gone"),
        )
    })?;
    let mut sandbox_workers = Vec::new();
    let mut other_children = Vec::new();
    for pid in descendants(server)? {
        let Some(memory) = ProcessMemory::read(pid) else {
            continue;
        };
        // The full command line: the report's copy may be shortened.
        if cmdline(pid).contains(SANDBOX_WORKER_MARK) {
            sandbox_workers.push(memory);
        } else {
            other_children.push(memory);
        }
    }
    let launcher = launcher
        .filter(|&pid| pid != server)
        .and_then(ProcessMemory::read);
    Ok(TreeMemory {
        server: server_memory,
        sandbox_workers,
        other_children,
        launcher,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vm_rss_is_read_in_bytes() {
        let status = "Name:\tx\nVmPeak:\t  9000 kB\nVmRSS:\t    1234 kB\nThreads:\t1\n";
        assert_eq!(parse_vm_rss(status), Some(1234 * 1024));
        assert_eq!(parse_vm_rss("Name:\tx\n"), None);
    }

    #[test]
    fn rss_file_is_read_apart_from_vm_rss() {
        let status =
            "VmRSS:\t 50000 kB\nRssAnon:\t 30000 kB\nRssFile:\t 19000 kB\nRssShmem:\t 1000 kB\n";
        assert_eq!(parse_rss_file(status), Some(19000 * 1024));
        assert_eq!(parse_vm_rss(status), Some(50000 * 1024));
        assert_eq!(parse_rss_file("VmRSS:\t 1 kB\n"), None);
    }

    #[test]
    fn ppid_is_found_past_a_command_name_with_spaces_and_parens() {
        let stat = "4242 (my (odd) name) S 17 4242 4242 0 -1 4194560 0 0";
        assert_eq!(parse_stat_ppid(stat), Some(17));
        assert_eq!(parse_stat_ppid("1 (init) S 0 1 1"), Some(0));
        assert_eq!(parse_stat_ppid("garbage"), None);
    }
}
