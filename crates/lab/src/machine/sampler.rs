//! Samples a server's whole process tree (RSS, PSS, CPU time) every interval on its own thread, so
//! memory is seen over time, not once; the rest of the machine is `noise`'s.

use bakeoff_model::records::results::{ProcessSample, ServerUsage, StepUsage};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub(crate) const SAMPLE_INTERVAL: Duration = Duration::from_millis(250);

struct ProcStat {
    pid: u32,
    ppid: u32,
    pgrp: u32,
}

fn read_stat(pid: u32) -> Option<(ProcStat, f64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let f = stat_fields(&text)?;
    let stat = ProcStat { pid, ppid: f.get(1)?.parse().ok()?, pgrp: f.get(2)?.parse().ok()? };
    let (own, children) = cpu_ticks(&f);
    Some((stat, (own + children) as f64 / clock_ticks()))
}

/// The fields of /proc/<pid>/stat after the command (which may hold spaces and parentheses).
fn stat_fields(text: &str) -> Option<Vec<&str>> {
    Some(text.rsplit_once(')')?.1.split_whitespace().collect())
}

/// (utime + stime, cutime + cstime) in clock ticks. Fields after the command: state(0) ppid(1)
/// pgrp(2) ... utime(11) stime(12) cutime(13) cstime(14).
fn cpu_ticks(f: &[&str]) -> (u64, u64) {
    let field = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    (field(11) + field(12), field(13) + field(14))
}

/// A process's own CPU ticks and its reaped children's, read now.
pub(crate) fn process_ticks(pid: u32) -> Option<(u64, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    Some(cpu_ticks(&stat_fields(&text)?))
}

pub(crate) fn clock_ticks() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

fn all_pids() -> Vec<u32> {
    std::fs::read_dir("/proc").map(|d| d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect()).unwrap_or_default()
}

/// Processes of the tree rooted at `leader`: its process group plus every descendant (servers that
/// put workers in groups of their own are still counted).
pub(crate) fn group_members(leader: u32) -> Vec<u32> {
    tree(leader).into_iter().map(|(s, _)| s.pid).collect()
}

fn tree(leader: u32) -> Vec<(ProcStat, f64)> {
    let stats: Vec<(ProcStat, f64)> = all_pids().into_iter().filter_map(read_stat).collect();
    let mut members: Vec<u32> = stats.iter().filter(|(s, _)| s.pgrp == leader || s.pid == leader).map(|(s, _)| s.pid).collect();
    loop {
        let before = members.len();
        for (s, _) in &stats {
            if members.contains(&s.ppid) && !members.contains(&s.pid) {
                members.push(s.pid);
            }
        }
        if members.len() == before {
            break;
        }
    }
    stats.into_iter().filter(|(s, _)| members.contains(&s.pid)).collect()
}

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as u64
    } else {
        4096
    }
}

fn rss_bytes(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/statm"))
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map(|pages| pages * page_size())
        .unwrap_or(0)
}

fn pss_bytes(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("Pss:"))?.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}

/// CPU seconds (user + system) used so far by the tree rooted at `leader`: cheaper than a full
/// sample (no memory maps are read), for polling.
pub(crate) fn tree_cpu_seconds(leader: u32) -> f64 {
    tree(leader).iter().map(|(_, cpu)| cpu).sum()
}

/// Waits at most `limit` for the tree of `leader` to go quiet (under a tenth of a core over one
/// `window`), or for `gone` to say it ended. None when it did, else its CPU use (in cores) over
/// the last window.
pub(crate) fn wait_tree_quiet(leader: u32, window: Duration, limit: Duration, mut gone: impl FnMut() -> bool) -> Option<f64> {
    const QUIET_CORES: f64 = 0.1;
    let start = Instant::now();
    let mut before = tree_cpu_seconds(leader);
    loop {
        std::thread::sleep(window);
        let now = tree_cpu_seconds(leader);
        let cores = (now - before) / window.as_secs_f64();
        if cores < QUIET_CORES || gone() {
            return None;
        }
        if start.elapsed() + window > limit {
            return Some(cores);
        }
        before = now;
    }
}

/// The pids of the tree rooted at `leader` (none when it has exited).
pub(crate) fn tree_pids(leader: u32) -> Vec<u32> {
    tree(leader).iter().map(|(stat, _)| stat.pid).collect()
}

/// One sample of the tree rooted at `leader`.
pub(crate) fn sample_tree(leader: u32, t_ms: i64) -> ProcessSample {
    let members = tree(leader);
    let mut s = ProcessSample { t_ms, rss_bytes: 0, pss_bytes: 0, cpu_s: 0.0, processes: 0 };
    for (stat, cpu) in &members {
        s.rss_bytes += rss_bytes(stat.pid);
        s.pss_bytes += pss_bytes(stat.pid);
        s.cpu_s += cpu;
        s.processes += 1;
    }
    s
}

/// A running sampler; `finish` stops it and returns the samples. Dropped without `finish` (an
/// early return on an error), it still stops its thread.
pub(crate) struct Sampler {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<Vec<ProcessSample>>>,
}

impl Sampler {
    /// Samples the tree of `leader`; times are relative to `zero`. The thread runs on `cpus` (the
    /// client's), so the lab's own work stays off the server's CPUs and their noise accounting.
    pub(crate) fn start(leader: u32, zero: Instant, interval: Duration, cpus: &[usize]) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        // Not pinned when the set is refused (an index out of range, or the kernel says no): the
        // noise accounting then bills the sampler to whichever set it ran on, which only
        // overstates noise, so a trial is not failed for it.
        let cpus = bakeoff_load::CpuSet::new(cpus).ok();
        let handle = std::thread::Builder::new()
            .name("bakeoff-sampler".into())
            .spawn(move || {
                if let Some(cpus) = cpus {
                    let _ = cpus.apply_to_current();
                }
                let mut out = Vec::new();
                let mut next = Instant::now();
                while !flag.load(Ordering::Relaxed) {
                    let t_ms = signed_ms(zero);
                    out.push(sample_tree(leader, t_ms));
                    next += interval;
                    let now = Instant::now();
                    if next > now {
                        std::thread::sleep(next - now);
                    } else {
                        next = now;
                    }
                }
                out.push(sample_tree(leader, signed_ms(zero)));
                out
            })
            .expect("spawn sampler thread");
        Sampler { stop, handle: Some(handle) }
    }

    pub(crate) fn finish(mut self) -> Vec<ProcessSample> {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.take().map(|h| h.join().unwrap_or_default()).unwrap_or_default()
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn signed_ms(zero: Instant) -> i64 {
    let now = Instant::now();
    if now >= zero {
        (now - zero).as_millis() as i64
    } else {
        -((zero - now).as_millis() as i64)
    }
}

/// Server usage over the measured window (samples with t_ms >= 0), for `requests` requests.
pub(crate) fn usage(samples: &[ProcessSample], requests: u64) -> ServerUsage {
    let measured: Vec<&ProcessSample> = samples.iter().filter(|s| s.is_measured()).collect();
    if measured.len() < 2 {
        return ServerUsage::default();
    }
    let (first, last) = (measured[0], measured[measured.len() - 1]);
    let cpu_s = (last.cpu_s - first.cpu_s).max(0.0);
    let wall_s = (last.t_ms - first.t_ms) as f64 / 1000.0;
    let mean = |f: fn(&ProcessSample) -> u64| measured.iter().map(|s| f(s)).sum::<u64>() / measured.len() as u64;
    ServerUsage {
        cpu_s,
        cpu_percent: if wall_s > 0.0 { 100.0 * cpu_s / wall_s } else { 0.0 },
        cpu_us_per_request: if requests > 0 { cpu_s * 1e6 / requests as f64 } else { 0.0 },
        peak_rss_bytes: measured.iter().map(|s| s.rss_bytes).max().unwrap_or(0),
        mean_rss_bytes: mean(|s| s.rss_bytes),
        peak_pss_bytes: measured.iter().map(|s| s.pss_bytes).max().unwrap_or(0),
        mean_pss_bytes: mean(|s| s.pss_bytes),
        rss_slope_mib_per_min: bakeoff_model::statistics::growth::rss_fit(samples).map(|f| f.slope).unwrap_or(0.0),
    }
}

/// The tree's CPU in each step of a multi-step load, the steps taken back to back from the end of
/// the warm-up (`t_ms` 0), each as long as it measured; the cumulative CPU is interpolated between
/// samples at the steps' edges. Empty for a single step (the trial's figures are its own).
pub(crate) fn step_usage(samples: &[ProcessSample], steps: &[(f64, u64)]) -> Vec<StepUsage> {
    if steps.len() < 2 || samples.len() < 2 {
        return Vec::new();
    }
    let cpu_at = |t_s: f64| -> f64 {
        let t_ms = t_s * 1000.0;
        let after = samples.iter().position(|s| s.t_ms as f64 >= t_ms).unwrap_or(samples.len() - 1).max(1);
        let (a, b) = (&samples[after - 1], &samples[after]);
        let span = (b.t_ms - a.t_ms) as f64;
        let f = if span > 0.0 { ((t_ms - a.t_ms as f64) / span).clamp(0.0, 1.0) } else { 1.0 };
        a.cpu_s + f * (b.cpu_s - a.cpu_s)
    };
    let mut start = 0.0;
    steps
        .iter()
        .map(|&(duration_s, requests)| {
            let cpu_s = (cpu_at(start + duration_s) - cpu_at(start)).max(0.0);
            start += duration_s;
            StepUsage {
                cpu_percent: if duration_s > 0.0 { 100.0 * cpu_s / duration_s } else { 0.0 },
                cpu_us_per_request: if requests > 0 { cpu_s * 1e6 / requests as f64 } else { 0.0 },
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_step_gets_the_cpu_inside_its_window() {
        // 45% of a core for 4 s, then 90% for 4 s: a ramp's two steps, sampled every 250 ms.
        let samples: Vec<ProcessSample> = (0..=32)
            .map(|i| {
                let t = i as f64 * 0.25;
                let cpu_s = if t <= 4.0 { 0.45 * t } else { 1.8 + 0.9 * (t - 4.0) };
                ProcessSample { t_ms: (t * 1000.0) as i64, rss_bytes: 1, pss_bytes: 0, cpu_s, processes: 1 }
            })
            .collect();
        let usage = step_usage(&samples, &[(4.0, 40_000), (4.0, 80_000)]);
        assert_eq!(usage.len(), 2);
        assert!((usage[0].cpu_percent - 45.0).abs() < 0.5 && (usage[1].cpu_percent - 90.0).abs() < 0.5, "{usage:?}");
        assert!((usage[0].cpu_us_per_request - 45.0).abs() < 0.5 && (usage[1].cpu_us_per_request - 45.0).abs() < 0.5, "{usage:?}");
        assert!(step_usage(&samples, &[(8.0, 1)]).is_empty(), "one step: the trial's own figures");
    }

    #[test]
    fn samples_a_real_process_tree_with_children() {
        let mut child = std::process::Command::new("sh").args(["-c", "sleep 5 & sleep 5 & wait"]).process_group(0).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let s = sample_tree(child.id(), 0);
        assert!(s.processes >= 3, "sh and two sleeps: {s:?}");
        assert!(s.rss_bytes > 0);
        unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
        child.wait().unwrap();
    }

    #[test]
    fn usage_and_slope_from_samples() {
        let samples: Vec<ProcessSample> = (0..=60)
            .map(|i| ProcessSample {
                t_ms: i * 1000,
                rss_bytes: (100 + i as u64) * 1024 * 1024,
                pss_bytes: 50 * 1024 * 1024,
                cpu_s: i as f64 * 0.5,
                processes: 1,
            })
            .collect();
        let u = usage(&samples, 60_000);
        assert!((u.cpu_percent - 50.0).abs() < 1e-9);
        assert!((u.cpu_us_per_request - 500.0).abs() < 1e-9);
        assert_eq!(u.peak_rss_bytes, 160 * 1024 * 1024);
        assert!((u.rss_slope_mib_per_min - 60.0).abs() < 1e-6, "{}", u.rss_slope_mib_per_min);
    }

    use std::os::unix::process::CommandExt;
}
