//! The server host's side of a measured run, done by its agent: finding the server's process before
//! the load, then watching its tree over the measurement with the lab's own meters (the precise CPU
//! meter, the RSS sampler, the noise probe), so a server on a host of its own is measured as one on
//! the lab's machine is.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bakeoff_model::records::noise::TrialNoise;

use super::protocol::{wall_ns, ProcessFound, ServerMeasure};
use crate::machine::cpu_meter::CpuReading;
use crate::machine::noise::{Measured, NoiseProbe};
use crate::machine::provenance::allowed_cpus;
use crate::machine::sampler::{group_members, Sampler, SAMPLE_INTERVAL};

/// Process `pid` on this host with its tree and CPUs, or why it cannot be the server.
pub(crate) fn check(pid: u32) -> Result<ProcessFound, String> {
    if pid == std::process::id() {
        return Err(format!("pid {pid} is the agent itself, not a server"));
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).map_err(|_| format!("no process {pid} runs there"))?;
    let name = stat.split_once('(').and_then(|(_, r)| r.rsplit_once(')')).map(|(n, _)| n.to_string()).unwrap_or_default();
    if stat.rsplit_once(')').and_then(|(_, r)| r.split_whitespace().next()) == Some("Z") {
        return Err(format!("process {pid} ({name}) has exited (a zombie)"));
    }
    Ok(ProcessFound { pid, name, processes: group_members(pid).len() as u32, cpus: allowed_cpus(pid) })
}

/// A watch running on a thread of its own; `finish` stops it and answers what it measured.
pub(crate) struct Watch {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<ServerMeasure>>,
}

impl Watch {
    /// Watches the tree of `found` from `zero_at_ns` (this host's clock) until `finish`.
    pub(crate) fn start(found: ProcessFound, zero_at_ns: u64) -> Watch {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name("bakeoff-watch".into())
            .spawn(move || watch(found, zero_at_ns, &flag))
            .expect("spawn the watch thread");
        Watch { stop, handle: Some(handle) }
    }

    /// Stops the watch and answers what it measured.
    pub(crate) fn finish(mut self) -> Option<ServerMeasure> {
        self.stop.store(true, Ordering::SeqCst);
        self.handle.take()?.join().ok()
    }
}

impl Drop for Watch {
    /// A session that ends mid-watch stops the thread too: the agent leaves nothing running.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn watch(found: ProcessFound, zero_at_ns: u64, stop: &AtomicBool) -> ServerMeasure {
    let pid = found.pid;
    let mut m = ServerMeasure {
        process: found,
        cpu_s: 0.0,
        wall_s: 0.0,
        peak_rss_bytes: 0,
        mean_rss_bytes: 0,
        samples: Vec::new(),
        noise: TrialNoise::default(),
    };
    // The measurement starts with the load's (after its warmup): the warmup's CPU is not billed.
    while wall_ns() < zero_at_ns {
        if stop.load(Ordering::SeqCst) {
            return m;
        }
        std::thread::sleep(Duration::from_nanos(zero_at_ns.saturating_sub(wall_ns()).min(5_000_000)));
    }
    let zero = Instant::now();
    let before = CpuReading::of_tree(pid);
    let own_before = bakeoff_load::process_cpu();
    let probe = NoiseProbe::start();
    let sampler = Sampler::start(pid, zero, SAMPLE_INTERVAL, &[]);
    while !stop.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(5));
    }
    m.cpu_s = CpuReading::of_tree(pid).since(&before).max(0.0);
    m.wall_s = zero.elapsed().as_secs_f64();
    m.samples = sampler.finish();
    let measured: Vec<_> = m.samples.iter().filter(|s| s.is_measured()).collect();
    m.peak_rss_bytes = measured.iter().map(|s| s.rss_bytes).max().unwrap_or(0);
    m.mean_rss_bytes = if measured.is_empty() { 0 } else { measured.iter().map(|s| s.rss_bytes).sum::<u64>() / measured.len() as u64 };
    // Every CPU of the host is one set; the server's tree and the agent itself are not noise.
    let cpus: Vec<usize> = (0..std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).collect();
    let pids: HashSet<u32> = group_members(pid).into_iter().collect();
    let mine = m.cpu_s + (bakeoff_load::process_cpu() - own_before);
    m.noise = probe.finish(&Measured { server_cpus: &cpus, client_cpus: &[], server_cpu_s: mine, client_cpu_s: 0.0, server_pids: &pids });
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_process_or_the_agent_itself_is_refused() {
        assert!(check(u32::MAX - 1).unwrap_err().contains("no process"));
        assert!(check(std::process::id()).unwrap_err().contains("agent itself"));
    }

    #[test]
    fn a_busy_child_is_metered_and_sampled() {
        let mut child = std::process::Command::new("sh").args(["-c", "while :; do :; done"]).spawn().unwrap();
        let found = check(child.id()).unwrap();
        let w = Watch::start(found, wall_ns());
        std::thread::sleep(Duration::from_millis(600));
        let m = w.finish().unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(m.cpu_s > 0.1 && m.cpu_s <= m.wall_s + 0.05, "{} s of CPU in {} s", m.cpu_s, m.wall_s);
        assert!(m.peak_rss_bytes > 0 && m.samples.len() >= 2, "{m:?}");
    }
}
