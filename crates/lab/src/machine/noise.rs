//! Per-trial noise accounting: snapshots of every CPU's time (/proc/stat) and of every process's
//! CPU time (`/proc/<pid>/stat`) before and after a trial, turned into steal and other processes' CPU
//! on the server's CPUs and on the client's. The lab's own process and the measured tree are not
//! noise; whatever else ran is, and the busiest such process is named. Where the machine has
//! energy counters, the packages' joules over the trial too.

use crate::machine::energy::EnergyReading;
use bakeoff_model::records::noise::{CpuSetNoise, OtherProcess, TrialNoise};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Instant;

/// Seconds of one CPU: busy (user + nice + system) and stolen. Interrupt and softirq time belong to
/// no process (loopback TCP processing for server and client alike), so they are not noise.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct CpuTimes {
    pub(crate) busy: f64,
    pub(crate) steal: f64,
}

/// Per-CPU lines of /proc/stat (`cpu0 user nice system idle iowait irq softirq steal ...`).
pub(crate) fn parse_proc_stat(text: &str, tick: f64) -> BTreeMap<usize, CpuTimes> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let mut f = line.split_whitespace();
        let Some(cpu) = f.next().and_then(|n| n.strip_prefix("cpu")).and_then(|n| n.parse::<usize>().ok()) else { continue };
        let v: Vec<f64> = f.filter_map(|x| x.parse().ok()).collect();
        let at = |i: usize| v.get(i).copied().unwrap_or(0.0) / tick;
        out.insert(cpu, CpuTimes { busy: at(0) + at(1) + at(2), steal: at(7) });
    }
    out
}

fn cpu_times() -> BTreeMap<usize, CpuTimes> {
    parse_proc_stat(&std::fs::read_to_string("/proc/stat").unwrap_or_default(), crate::machine::sampler::clock_ticks())
}

/// Busy CPU seconds (time charged to processes) of `cpus` so far; of every CPU when empty.
pub(crate) fn busy_seconds(cpus: &[usize]) -> f64 {
    cpu_times().iter().filter(|(cpu, _)| cpus.is_empty() || cpus.contains(cpu)).map(|(_, t)| t.busy).sum()
}

/// (name, CPU seconds) of every process now, by pid.
fn processes() -> HashMap<u32, (String, f64)> {
    let tick = crate::machine::sampler::clock_ticks();
    let Ok(dir) = std::fs::read_dir("/proc") else { return HashMap::new() };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let (head, rest) = text.rsplit_once(')')?;
            let name = head.split_once('(')?.1.to_string();
            let f: Vec<&str> = rest.split_whitespace().collect();
            // utime(11) stime(12): the process's own threads, not reaped children (a child that
            // ended during the trial was itself seen, or was too short to matter).
            let ticks: f64 = [11, 12].iter().filter_map(|&i| f.get(i)?.parse::<f64>().ok()).sum();
            Some((pid, (name, ticks / tick)))
        })
        .collect()
}

/// Snapshots taken when a trial's measurement starts.
pub(crate) struct NoiseProbe {
    cpus: BTreeMap<usize, CpuTimes>,
    procs: HashMap<u32, (String, f64)>,
    lab_cpu: f64,
    at: Instant,
    energy: Option<EnergyReading>,
}

/// What the measurement itself used, to be subtracted from the CPU sets' busy time.
pub(crate) struct Measured<'a> {
    pub(crate) server_cpus: &'a [usize],
    pub(crate) client_cpus: &'a [usize],
    /// CPU seconds of the measured process trees (the server and the services it uses).
    pub(crate) server_cpu_s: f64,
    /// CPU seconds of measured trees on the client's CPUs besides the load generator's own (an
    /// upstream placed there).
    pub(crate) client_cpu_s: f64,
    /// Pids of the measured trees, which are not "other".
    pub(crate) server_pids: &'a HashSet<u32>,
}

impl NoiseProbe {
    pub(crate) fn start() -> NoiseProbe {
        let energy = EnergyReading::now();
        NoiseProbe { cpus: cpu_times(), procs: processes(), lab_cpu: bakeoff_load::process_cpu(), at: Instant::now(), energy }
    }

    pub(crate) fn finish(self, m: &Measured<'_>) -> TrialNoise {
        let wall_s = self.at.elapsed().as_secs_f64();
        let lab_cpu = bakeoff_load::process_cpu() - self.lab_cpu;
        let after = cpu_times();
        let set = |cpus: &[usize], mine: f64| -> CpuSetNoise {
            let delta =
                |f: fn(&CpuTimes) -> f64| -> f64 { cpus.iter().filter_map(|c| Some(f(after.get(c)?) - f(self.cpus.get(c)?))).sum() };
            let pct = |s: f64| if wall_s > 0.0 { 100.0 * s.max(0.0) / wall_s } else { 0.0 };
            CpuSetNoise { cpus: cpus.to_vec(), steal_percent: pct(delta(|t| t.steal)), other_percent: pct(delta(|t| t.busy) - mine) }
        };
        let own = std::process::id();
        let busiest_other = processes()
            .into_iter()
            .filter(|(pid, _)| *pid != own && !m.server_pids.contains(pid))
            .map(|(pid, (name, cpu))| {
                let before = self.procs.get(&pid).map_or(0.0, |(_, c)| *c);
                OtherProcess { pid, name, cpu_percent: 100.0 * (cpu - before) / wall_s.max(1e-9) }
            })
            .max_by(|a, b| a.cpu_percent.total_cmp(&b.cpu_percent))
            .filter(|p| p.cpu_percent >= 1.0);
        TrialNoise {
            wall_s,
            server: set(m.server_cpus, m.server_cpu_s),
            client: set(m.client_cpus, lab_cpu + m.client_cpu_s),
            busiest_other,
            client_hosts: Vec::new(),
            energy_j: self.energy.as_ref().zip(EnergyReading::now()).and_then(|(before, after)| before.joules_until(&after)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_stat_per_cpu_lines_give_busy_and_steal_seconds() {
        let text = "cpu  9 9 9 9 9 9 9 9 0 0\ncpu0 100 10 50 1000 5 3 7 20 0 0\ncpu1 200 0 100 900 0 0 0 0 0 0\nintr 1 2 3\n";
        let t = parse_proc_stat(text, 100.0);
        assert_eq!(t.len(), 2, "the aggregate line is skipped");
        assert_eq!(t[&0], CpuTimes { busy: 1.6, steal: 0.2 });
        assert_eq!(t[&1], CpuTimes { busy: 3.0, steal: 0.0 });
    }

    #[test]
    fn a_busy_process_on_the_machine_is_seen_as_other_and_named() {
        let cpus: Vec<usize> = cpu_times().keys().copied().collect();
        let probe = NoiseProbe::start();
        // A real process outside the measurement that spins for 600 ms, still alive at the end.
        let mut burner = std::process::Command::new("sh").args(["-c", "while :; do :; done"]).spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(600));
        let none = HashSet::new();
        let noise =
            probe.finish(&Measured { server_cpus: &cpus, client_cpus: &[], server_cpu_s: 0.0, client_cpu_s: 0.0, server_pids: &none });
        burner.kill().unwrap();
        burner.wait().unwrap();
        assert!(noise.server.other_percent > 30.0, "{noise:?}");
        assert!(noise.wall_s >= 0.5);
        // The burner, or on a shared machine something busier still, is named.
        let busiest = noise.busiest_other.expect("a busy other process is named");
        assert!(busiest.cpu_percent >= 1.0 && !busiest.name.is_empty(), "{busiest:?}");
        assert!(noise.server.steal_percent >= 0.0 && noise.client.cpus.is_empty());
    }
}
