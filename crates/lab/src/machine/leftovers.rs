//! Finds every process a server started, whatever its session or parent (a double fork with
//! `setsid` leaves both the process group and the process tree): the members of the server's
//! cgroup and the processes that carry its marker in their environment. What outlives the stop
//! is killed here and named to the caller.

use crate::machine::cgroup::CpuGroup;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The environment variable the lab sets on every server it starts; children inherit it.
pub(crate) const MARKER_VAR: &str = "BAKEOFF_CELL";

/// A process that was still running after its server's process group got SIGTERM and SIGKILL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leftover {
    pub(crate) pid: u32,
    pub(crate) command: String,
}

impl std::fmt::Display for Leftover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pid {} (`{}`)", self.pid, self.command)
    }
}

/// A marker no other server of this or another lab process carries.
pub(crate) fn new_marker(name: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name: String = name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    format!("{name}-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Live processes of the cell: in `group`, or with `MARKER_VAR=marker` in their environment.
pub(crate) fn find(marker: &str, group: Option<&CpuGroup>) -> Vec<Leftover> {
    let entry = format!("{MARKER_VAR}={marker}");
    let mut pids: Vec<u32> = group.map(CpuGroup::members).unwrap_or_default();
    pids.extend(all_pids().into_iter().filter(|&pid| carries(pid, entry.as_bytes())));
    pids.sort_unstable();
    pids.dedup();
    pids.into_iter().filter(|&pid| pid != std::process::id() && alive(pid)).map(|pid| Leftover { pid, command: command(pid) }).collect()
}

/// SIGKILLs each leftover and waits (at most two seconds) until none is alive.
pub(crate) fn kill_all(leftovers: &[Leftover]) {
    for l in leftovers {
        // SAFETY: kill(2) on a pid we just found; a pid that exited meanwhile yields ESRCH.
        unsafe {
            libc::kill(l.pid as i32, libc::SIGKILL);
        }
    }
    let deadline = Instant::now() + Duration::from_secs(2);
    while leftovers.iter().any(|l| alive(l.pid)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn all_pids() -> Vec<u32> {
    std::fs::read_dir("/proc").map(|d| d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect()).unwrap_or_default()
}

fn carries(pid: u32, entry: &[u8]) -> bool {
    std::fs::read(format!("/proc/{pid}/environ")).map(|env| env.split(|&b| b == 0).any(|e| e == entry)).unwrap_or(false)
}

/// Running, not a zombie (the machine's init may never reap an orphan).
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(')').map(|(_, rest)| !rest.trim_start().starts_with('Z')))
        .unwrap_or(false)
}

fn command(pid: u32) -> String {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let words: Vec<String> = raw.split(|&b| b == 0).filter(|w| !w.is_empty()).map(|w| String::from_utf8_lossy(w).into_owned()).collect();
    let line = words.join(" ");
    if line.chars().count() > 100 {
        format!("{}…", line.chars().take(100).collect::<String>())
    } else {
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marked_process_is_found_whatever_its_session_and_killed() {
        let marker = new_marker("test/leftovers");
        // `setsid` puts the sleeper in a session of its own; the shell exits at once, so the
        // sleeper is re-parented: only the marker still ties it to us.
        let status = std::process::Command::new("sh")
            .args(["-c", "setsid sleep 30 >/dev/null 2>&1 < /dev/null &"])
            .env(MARKER_VAR, &marker)
            .status()
            .unwrap();
        assert!(status.success());
        // Until the sleeper has exec'd, the marked process seen may be `setsid` itself (or a fork
        // of it with no command line yet): wait for the sleeper, not for the first marked pid.
        let deadline = Instant::now() + Duration::from_secs(2);
        let sleeper = |found: &[Leftover]| found.iter().any(|l| l.command.contains("sleep 30"));
        let mut found = find(&marker, None);
        while !(found.len() == 1 && sleeper(&found)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
            found = find(&marker, None);
        }
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(sleeper(&found), "{}", found[0]);
        kill_all(&found);
        assert!(!alive(found[0].pid));
        assert!(find(&marker, None).is_empty());
    }
}
