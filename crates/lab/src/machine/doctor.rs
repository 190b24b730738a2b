//! What this machine is, for `bakeoff doctor` and the first lines of a run: cores and their split,
//! the frequency governor and boost, steal and other processes' CPU over a short window, cgroup,
//! network-namespace and io_uring support, and advice where something can be changed. Read from
//! /proc and /sys; every parser takes the file's text, so it is tested on sample inputs.

use crate::machine::noise::{parse_proc_stat, Measured, NoiseProbe};
use bakeoff_model::records::noise::OtherProcess;
use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

/// The CPU frequency governor of the machine's CPUs, where the kernel exposes it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Governor {
    /// Every CPU runs at its highest frequency: what benchmarks want.
    Performance,
    /// Every CPU uses the same other governor (`powersave`, `schedutil`, `ondemand`, ...).
    Other(String),
    /// The CPUs disagree (named as `cpu0=performance cpu1=powersave`).
    Mixed(String),
}

/// Cgroup support for placing servers on their CPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CgroupSupport {
    /// cgroup v2 with the cpuset controller enabled: servers get a cpuset of their own.
    V2Cpuset,
    /// cgroup v1's cpuset hierarchy.
    V1Cpuset,
    /// cgroup v2 without the cpuset controller in `cgroup.subtree_control`.
    V2WithoutCpuset,
    /// No cgroup file system the lab can use: placement is by CPU affinity alone.
    Unavailable,
}

/// Whether io_uring can be used here (by a stack or a future load generator).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoUring {
    /// `io_uring_setup` succeeded.
    Available,
    /// `kernel.io_uring_disabled` is 1: only members of `kernel.io_uring_group` may use it.
    Restricted,
    /// `kernel.io_uring_disabled` is 2, or the call is refused (a seccomp filter, a container).
    Disabled,
    /// The kernel has no io_uring (ENOSYS).
    Missing,
}

/// Something to change on this machine before measuring, with how.
#[derive(Debug, Clone, PartialEq)]
pub enum Advice {
    /// The governor lets frequencies drift with load.
    Governor(String),
    /// Turbo/boost makes the frequency depend on temperature and on the other cores' load.
    Boost,
    /// The hypervisor took CPU time from this VM.
    Steal(f64),
    /// Another process used this much of a core.
    BusyProcess(OtherProcess),
    /// Fewer than two CPUs: the server and the load generator share one.
    OneCpu,
}

impl Advice {
    /// What was seen and what to do, in one sentence.
    pub fn message(&self) -> String {
        match self {
            Advice::Governor(g) => format!(
                "the CPU frequency governor is {g}: frequencies follow load, so runs drift; \
                 set `cpupower frequency-set -g performance` (or write performance to .../cpufreq/scaling_governor)"
            ),
            Advice::Boost => "CPU boost is on: the frequency depends on heat and on the other cores; \
                 turn it off for steadier numbers (echo 0 > /sys/devices/system/cpu/cpufreq/boost)"
                .into(),
            Advice::Steal(p) => format!(
                "the hypervisor stole {p:.1}% of a core: other VMs share this host; \
                 use a dedicated or larger instance, or measure at a quieter time"
            ),
            Advice::BusyProcess(p) => format!(
                "{} (pid {}) used {:.0}% of a core: stop it before measuring, or its CPU shows up as noise",
                p.name, p.pid, p.cpu_percent
            ),
            Advice::OneCpu => "one CPU: the server and the load generator share it; \
                 comparisons still work but absolute numbers mean little"
                .into(),
        }
    }
}

/// The machine's quick facts: no load, a few seconds at most.
#[derive(Debug, Clone, PartialEq)]
pub struct HostFacts {
    /// CPUs online.
    pub cores: usize,
    /// The CPUs the server (and its services) get by default.
    pub server_cpus: Vec<usize>,
    /// The CPUs the load generator gets by default.
    pub client_cpus: Vec<usize>,
    /// The frequency governor; None where cpufreq is not exposed (most VMs).
    pub governor: Option<Governor>,
    /// Turbo/boost on (true) or off; None where not readable.
    pub boost: Option<bool>,
    /// How long the CPU was watched.
    pub window: Duration,
    /// Steal over the window, percent of one core summed over the CPUs.
    pub steal_percent: f64,
    /// Other processes' CPU over the window, percent of one core summed over the CPUs.
    pub other_percent: f64,
    /// The busiest other process, if any used 1% of a core or more.
    pub busiest: Option<OtherProcess>,
    /// Cgroup support for CPU placement.
    pub cgroup: CgroupSupport,
    /// Network namespaces can be made (`unshare --net`).
    pub netns: bool,
    /// io_uring availability.
    pub io_uring: IoUring,
}

/// Steal above this (percent of a core) earns advice: a measurement's noise starts to show it.
const STEAL_ADVICE: f64 = 1.0;
/// Another process above this (percent of a core) earns advice.
const BUSY_ADVICE: f64 = 5.0;

impl HostFacts {
    /// Reads the machine and watches its CPUs for `window`.
    pub fn gather(window: Duration) -> HostFacts {
        let (server_cpus, client_cpus) = crate::machine::provenance::default_cpu_split();
        let cpus: Vec<usize> = parse_proc_stat(&read("/proc/stat").unwrap_or_default(), 1.0).keys().copied().collect();
        let probe = NoiseProbe::start();
        std::thread::sleep(window);
        // Every CPU counted as the "client" set, so the lab's own CPU is not counted as other.
        let none = HashSet::new();
        let noise =
            probe.finish(&Measured { server_cpus: &[], client_cpus: &cpus, server_cpu_s: 0.0, client_cpu_s: 0.0, server_pids: &none });
        HostFacts {
            cores: cpus.len().max(1),
            server_cpus,
            client_cpus,
            governor: governor(Path::new("/sys/devices/system/cpu")),
            boost: parse_boost(
                read("/sys/devices/system/cpu/cpufreq/boost").as_deref(),
                read("/sys/devices/system/cpu/intel_pstate/no_turbo").as_deref(),
            ),
            window,
            steal_percent: noise.client.steal_percent,
            other_percent: noise.client.other_percent.max(0.0),
            busiest: noise.busiest_other,
            cgroup: cgroup_support(Path::new("/sys/fs/cgroup")),
            netns: netns_works(),
            io_uring: parse_io_uring(read("/proc/sys/kernel/io_uring_disabled").as_deref(), io_uring_probe()),
        }
    }

    /// What to change here, most important first; empty on a machine ready to measure.
    pub fn advice(&self) -> Vec<Advice> {
        let mut out = Vec::new();
        if self.cores < 2 {
            out.push(Advice::OneCpu);
        }
        if self.steal_percent >= STEAL_ADVICE {
            out.push(Advice::Steal(self.steal_percent));
        }
        if let Some(p) = self.busiest.as_ref().filter(|p| p.cpu_percent >= BUSY_ADVICE) {
            out.push(Advice::BusyProcess(p.clone()));
        }
        match &self.governor {
            Some(Governor::Other(g)) | Some(Governor::Mixed(g)) => out.push(Advice::Governor(g.clone())),
            _ => {}
        }
        if self.boost == Some(true) {
            out.push(Advice::Boost);
        }
        out
    }
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// The governor of every `cpuN/cpufreq/scaling_governor` under `cpu_dir`; None when no CPU has one.
pub(crate) fn governor(cpu_dir: &Path) -> Option<Governor> {
    let mut per_cpu: Vec<(usize, String)> = std::fs::read_dir(cpu_dir)
        .ok()?
        .filter_map(|e| {
            let e = e.ok()?;
            let n: usize = e.file_name().to_str()?.strip_prefix("cpu")?.parse().ok()?;
            Some((n, std::fs::read_to_string(e.path().join("cpufreq/scaling_governor")).ok()?))
        })
        .collect();
    per_cpu.sort();
    parse_governors(&per_cpu)
}

/// One governor for the machine from each CPU's `scaling_governor` text.
pub(crate) fn parse_governors(per_cpu: &[(usize, String)]) -> Option<Governor> {
    let names: Vec<(usize, &str)> = per_cpu.iter().map(|(c, g)| (*c, g.trim())).filter(|(_, g)| !g.is_empty()).collect();
    let (_, first) = *names.first()?;
    if names.iter().any(|(_, g)| *g != first) {
        let all: Vec<String> = names.iter().map(|(c, g)| format!("cpu{c}={g}")).collect();
        return Some(Governor::Mixed(all.join(" ")));
    }
    Some(if first == "performance" { Governor::Performance } else { Governor::Other(first.to_string()) })
}

/// Boost from `cpufreq/boost` (1 = on; AMD and acpi-cpufreq) or intel_pstate's `no_turbo` (1 = off).
pub(crate) fn parse_boost(boost: Option<&str>, no_turbo: Option<&str>) -> Option<bool> {
    let flag = |t: &str| match t.trim() {
        "1" => Some(true),
        "0" => Some(false),
        _ => None,
    };
    boost.and_then(flag).or_else(|| no_turbo.and_then(flag).map(|off| !off))
}

/// io_uring from `kernel.io_uring_disabled` (absent before Linux 6.6) and a probe of the call:
/// `Ok(())` when `io_uring_setup` gave a ring, else its errno.
pub(crate) fn parse_io_uring(disabled: Option<&str>, probe: Result<(), i32>) -> IoUring {
    match disabled.map(str::trim) {
        Some("2") => return IoUring::Disabled,
        Some("1") if probe.is_err() => return IoUring::Restricted,
        _ => {}
    }
    match probe {
        Ok(()) => IoUring::Available,
        Err(libc::ENOSYS) => IoUring::Missing,
        Err(_) => IoUring::Disabled,
    }
}

/// Asks the kernel for a one-entry ring and closes it at once.
fn io_uring_probe() -> Result<(), i32> {
    // io_uring_params is 120 bytes; zeroed is a valid request (no flags).
    let mut params = [0u8; 120];
    // SAFETY: the kernel writes at most sizeof(io_uring_params) into `params`, which is that long.
    let fd = unsafe { libc::syscall(libc::SYS_io_uring_setup, 1u32, params.as_mut_ptr()) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EPERM));
    }
    // SAFETY: `fd` is the ring the call just returned and nothing else holds it.
    unsafe { libc::close(fd as i32) };
    Ok(())
}

/// Cgroup support under `root` (normally /sys/fs/cgroup).
pub(crate) fn cgroup_support(root: &Path) -> CgroupSupport {
    if root.join("cpuset/cpuset.cpus").exists() {
        return CgroupSupport::V1Cpuset;
    }
    let Ok(controllers) = std::fs::read_to_string(root.join("cgroup.controllers")) else { return CgroupSupport::Unavailable };
    let enabled = std::fs::read_to_string(root.join("cgroup.subtree_control")).unwrap_or_default();
    let has = |t: &str| t.split_whitespace().any(|c| c == "cpuset");
    if has(&controllers) && has(&enabled) {
        CgroupSupport::V2Cpuset
    } else {
        CgroupSupport::V2WithoutCpuset
    }
}

/// Whether a process can get a network namespace of its own (`unshare --net true`, bounded).
fn netns_works() -> bool {
    let mut cmd = std::process::Command::new("unshare");
    cmd.args(["--net", "true"]);
    crate::install::run_bounded(&mut cmd, Duration::from_secs(3)).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn governors_read_as_one_or_as_a_mix() {
        let g = |v: &[(usize, &str)]| parse_governors(&v.iter().map(|(c, s)| (*c, s.to_string())).collect::<Vec<_>>());
        assert_eq!(g(&[(0, "performance\n"), (1, "performance\n")]), Some(Governor::Performance));
        assert_eq!(g(&[(0, "schedutil\n"), (1, "schedutil\n")]), Some(Governor::Other("schedutil".into())));
        assert_eq!(g(&[(0, "performance\n"), (1, "powersave\n")]), Some(Governor::Mixed("cpu0=performance cpu1=powersave".into())));
        assert_eq!(g(&[]), None, "no cpufreq (a VM): nothing to say");
    }

    #[test]
    fn boost_from_either_file() {
        assert_eq!(parse_boost(Some("1\n"), None), Some(true));
        assert_eq!(parse_boost(Some("0\n"), Some("0\n")), Some(false), "cpufreq/boost wins");
        assert_eq!(parse_boost(None, Some("1\n")), Some(false), "no_turbo=1 means boost off");
        assert_eq!(parse_boost(None, Some("0")), Some(true));
        assert_eq!(parse_boost(None, None), None);
        assert_eq!(parse_boost(Some("garbage"), None), None);
    }

    #[test]
    fn io_uring_from_the_sysctl_and_the_probe() {
        assert_eq!(parse_io_uring(Some("0\n"), Ok(())), IoUring::Available);
        assert_eq!(parse_io_uring(None, Ok(())), IoUring::Available, "kernels before 6.6 have no sysctl");
        assert_eq!(parse_io_uring(Some("2\n"), Ok(())), IoUring::Disabled);
        assert_eq!(parse_io_uring(Some("1\n"), Err(libc::EPERM)), IoUring::Restricted);
        assert_eq!(parse_io_uring(Some("1\n"), Ok(())), IoUring::Available, "this user is in io_uring_group");
        assert_eq!(parse_io_uring(None, Err(libc::ENOSYS)), IoUring::Missing);
        assert_eq!(parse_io_uring(None, Err(libc::EPERM)), IoUring::Disabled, "a seccomp filter refuses it");
    }

    #[test]
    fn steal_is_read_per_cpu_from_proc_stat() {
        // Two snapshots one second apart (100 ticks a second): cpu1 lost 25 ticks to the hypervisor.
        let before = parse_proc_stat("cpu0 100 0 50 1000 0 0 0 0 0 0\ncpu1 100 0 50 1000 0 0 0 10 0 0\n", 100.0);
        let after = parse_proc_stat("cpu0 150 0 60 1040 0 0 0 0 0 0\ncpu1 120 0 55 1050 0 0 0 35 0 0\n", 100.0);
        let steal: f64 = after.iter().map(|(c, t)| t.steal - before[c].steal).sum();
        assert!((steal - 0.25).abs() < 1e-9, "{steal}");
    }

    #[test]
    fn cgroup_layouts() {
        let dir = std::env::temp_dir().join(format!("bakeoff-cgroup-layout-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(cgroup_support(&dir), CgroupSupport::Unavailable);
        std::fs::write(dir.join("cgroup.controllers"), "cpuset cpu io memory pids\n").unwrap();
        assert_eq!(cgroup_support(&dir), CgroupSupport::V2WithoutCpuset);
        std::fs::write(dir.join("cgroup.subtree_control"), "cpu cpuset\n").unwrap();
        assert_eq!(cgroup_support(&dir), CgroupSupport::V2Cpuset);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn advice_names_what_to_change() {
        let busy = OtherProcess { pid: 42, name: "apt".into(), cpu_percent: 60.0 };
        let facts = HostFacts {
            cores: 2,
            server_cpus: vec![0],
            client_cpus: vec![1],
            governor: Some(Governor::Other("powersave".into())),
            boost: None,
            window: Duration::from_secs(1),
            steal_percent: 3.0,
            other_percent: 61.0,
            busiest: Some(busy.clone()),
            cgroup: CgroupSupport::V2Cpuset,
            netns: true,
            io_uring: IoUring::Available,
        };
        let advice = facts.advice();
        assert_eq!(advice, vec![Advice::Steal(3.0), Advice::BusyProcess(busy), Advice::Governor("powersave".into())]);
        assert!(advice[1].message().contains("apt (pid 42) used 60%"), "{}", advice[1].message());
        let quiet = HostFacts { steal_percent: 0.0, busiest: None, governor: Some(Governor::Performance), ..facts };
        assert!(quiet.advice().is_empty());
    }
}
