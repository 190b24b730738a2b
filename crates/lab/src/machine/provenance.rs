//! Provenance of a run: the machine (CPU model, cores, kernel, memory, OS) and the git commit.

use bakeoff_model::records::results::MachineInfo;
use std::path::Path;

/// Describes this machine for a run's provenance: host name, CPU model, cores, kernel, memory and OS.
pub fn machine_info() -> MachineInfo {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    let memory_bytes = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| m.lines().find(|l| l.starts_with("MemTotal:"))?.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .unwrap_or(0);
    let os = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|t| t.lines().find(|l| l.starts_with("PRETTY_NAME="))?.split_once('=').map(|(_, v)| v.trim_matches('"').to_string()))
        .unwrap_or_else(|| "unknown".into());
    MachineInfo {
        hostname: read_trim("/proc/sys/kernel/hostname"),
        cpu_model,
        cores: std::thread::available_parallelism().map(|n| n.get() as u32).unwrap_or(1),
        kernel: read_trim("/proc/sys/kernel/osrelease"),
        memory_bytes,
        os,
    }
}

fn read_trim(path: &str) -> String {
    std::fs::read_to_string(path).map(|s| s.trim().to_string()).unwrap_or_default()
}

/// `HEAD`'s commit, with `-dirty` when the work tree has changes; None outside a git checkout.
pub(crate) fn git_commit(root: &Path) -> Option<String> {
    let out = std::process::Command::new("git").args(["rev-parse", "HEAD"]).current_dir(root).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let commit = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let dirty = std::process::Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=no"])
        .current_dir(root)
        .output()
        .map(|o| !o.stdout.is_empty())
        .unwrap_or(false);
    Some(if dirty { format!("{commit}-dirty") } else { commit })
}

/// Splits the machine's CPUs between server and client: the first half serves, the second loads
/// (with 2 cores: CPU 0 and CPU 1). Services share the server's CPUs.
pub fn default_cpu_split() -> (Vec<usize>, Vec<usize>) {
    let n = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    if n < 2 {
        return (vec![], vec![]);
    }
    let half = n / 2;
    ((0..half).collect(), (half..n).collect())
}

/// The split for a run whose servers need at most `most_workers` CPUs: the server side keeps one
/// CPU beyond them (for a runtime's own threads, and so a server that ignores WORKERS shows it) and
/// the client gets every other CPU, so it is not the bottleneck while CPUs sit idle on the server
/// side. Never more server CPUs than [`default_cpu_split`] gives, and the same split on 2 cores.
pub fn cpu_split_for(cpus: usize, most_workers: u32) -> (Vec<usize>, Vec<usize>) {
    if cpus < 2 {
        return (vec![], vec![]);
    }
    let server = (most_workers as usize + 1).clamp(1, cpus / 2);
    ((0..server).collect(), (server..cpus).collect())
}

/// Parses a CPU list such as `0`, `0,2` or `0-3`.
pub fn parse_cpu_list(s: &str) -> Result<Vec<usize>, String> {
    let n = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (usize, usize) = (
            a.parse().map_err(|_| format!("`{part}` is not a CPU number or range"))?,
            b.parse().map_err(|_| format!("`{part}` is not a CPU number or range"))?,
        );
        if a > b || b >= n {
            return Err(format!("`{part}` is outside this machine's CPUs 0-{}", n - 1));
        }
        out.extend(a..=b);
    }
    if out.is_empty() {
        return Err("empty CPU list".into());
    }
    Ok(out)
}

/// The CPUs `pid` may run on (`Cpus_allowed_list` of /proc/PID/status, e.g. `0-1,3`).
pub(crate) fn allowed_cpus(pid: u32) -> Vec<usize> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let list = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")).unwrap_or("").trim();
    parse_cpu_ranges(list)
}

fn parse_cpu_ranges(list: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for part in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        if let (Ok(a), Ok(b)) = (a.parse::<usize>(), b.parse::<usize>()) {
            out.extend(a..=b);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn cpu_lists_of_proc_status_read_as_cpus() {
        assert_eq!(parse_cpu_ranges("0-1,3"), [0, 1, 3]);
        assert_eq!(parse_cpu_ranges("2"), [2]);
        assert!(parse_cpu_ranges("").is_empty());
        assert!(!allowed_cpus(std::process::id()).is_empty());
    }

    #[test]
    fn the_client_gets_every_cpu_the_servers_workers_do_not_need() {
        assert_eq!(cpu_split_for(2, 1), (vec![0], vec![1]), "2 cores: as before");
        assert_eq!(cpu_split_for(8, 1), (vec![0, 1], vec![2, 3, 4, 5, 6, 7]));
        assert_eq!(cpu_split_for(8, 4), (vec![0, 1, 2, 3], vec![4, 5, 6, 7]), "never more than half");
        assert_eq!(cpu_split_for(16, 2).1.len(), 13);
        assert_eq!(cpu_split_for(1, 1), (vec![], vec![]));
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0").unwrap(), vec![0]);
        assert!(parse_cpu_list("9999").unwrap_err().contains("outside"));
        assert!(parse_cpu_list("a").unwrap_err().contains("not a CPU"));
        let m = machine_info();
        assert!(m.cores >= 1 && m.memory_bytes > 0 && !m.kernel.is_empty());
    }
}
