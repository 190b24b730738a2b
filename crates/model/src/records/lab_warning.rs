//! The lab's own warnings about a trial (beside the load generator's `bakeoff_load::Warning`): what
//! each says, the advice that goes with it and whether it disqualifies the cell, written here once.

use crate::scenario::Scenario;
use serde::{Deserialize, Serialize};

/// Measurement-quality problems the lab sees around the load generator, stored with each trial.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LabWarning {
    /// The server process tree exited during measurement.
    ServerDied {
        /// Its exit status, as printed.
        exit: String,
    },
    /// CPU used by processes that are neither the server nor the client.
    BackgroundNoise {
        /// Percent of one core.
        cpu_percent: f64,
    },
    /// Memory grew steadily during the measurement.
    MemoryGrowth {
        /// The fitted RSS slope.
        mib_per_min: f64,
    },
    /// The hypervisor took CPU time from the server's or the client's CPUs.
    CpuSteal {
        /// Percent of one core.
        cpu_percent: f64,
    },
    /// The server kept more cores busy than its workers while more server CPUs were available:
    /// it ignores WORKERS (or runs handlers outside them), so it had more parallelism than its peers.
    WorkersExceeded {
        /// The WORKERS it was given.
        workers: u32,
        /// The cores its tree kept busy, on average.
        cores_used: f64,
        /// The server CPUs it could use.
        server_cpus: u32,
    },
    /// Processes the server started were still running after its process group got SIGTERM and
    /// SIGKILL (they left the group, e.g. with `setsid`); the lab killed them.
    ProcessesLeftBehind {
        /// Each as "pid N (`command`)".
        processes: Vec<String>,
    },
    /// The live-data probe, run again on the warm server right after the measurement, failed:
    /// the answers measured were (at least in part) cached.
    StaleAfterLoad {
        /// The scenario probed.
        scenario: Scenario,
        /// What the probe found.
        reason: String,
    },
    /// The CPU-cost check, run again on the warm server right after the cell's first trial,
    /// failed: under the load the work stopped costing what verification measured (an answer
    /// cached after N requests, work done only while the verifier's light URL is seen).
    CostAfterLoad {
        /// The scenario checked.
        scenario: Scenario,
        /// What the check found.
        reason: String,
    },
    /// Other processes kept using the trial's CPUs through the lab's bounded wait for quiet before
    /// the trial.
    NotQuietBeforeTrial {
        /// Percent of one core, over the wait's last quarter second.
        cpu_percent: f64,
    },
    /// The variant reproduces a bug on purpose: measured and shown to tell what the bug costs,
    /// never ranked, called fastest or compared with peers.
    DeliberateBug {
        /// The bug, as its manifest's `reproduces` says.
        reproduces: String,
    },
    /// The server was already running (`bench --url`): bakeoff neither started nor stopped it, so
    /// it had no process group, cgroup, pinned CPUs or WORKERS of bakeoff's. Without its pid its
    /// CPU and memory are not measured, and its efficiency is never ranked.
    Unmanaged {
        /// The process whose tree was sampled (`--pid`), if given.
        pid: Option<u32>,
        /// The client's CPUs its tree may run on (its affinity), which the lab did not set: the
        /// server and the load generator may then compete for them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        on_client_cpus: Vec<usize>,
        /// The run's server CPUs, which the message tells to pin it to.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        server_cpus: Vec<usize>,
    },
    /// Under the block schedule the server kept using CPU while the others were measured: a
    /// timer, a collector or a pool that taxes its co-resident peers' slices.
    BusyWhileIdle {
        /// Percent of one core while idle beside the others.
        cpu_percent: f64,
    },
    /// A scenario file's answers were checked, but nothing proved the server did the work behind
    /// them (no live-data probe, cost pair or statement count): a cache or a precomputed answer
    /// passes. Measured and ranked; no claim about it is judged.
    WorkNotProven {
        /// The scenario.
        scenario: Scenario,
    },
}

/// How many cores beyond WORKERS a server may keep busy before it counts as not honouring WORKERS:
/// a runtime's own threads (its timers, a front that only relays) use a little; a server that runs
/// handlers on every CPU uses whole cores.
pub const WORKERS_SLACK_CORES: f64 = 0.5;

impl LabWarning {
    /// The worker check: a warning when the server tree kept more than WORKERS + `WORKERS_SLACK_CORES`
    /// cores busy while more server CPUs than WORKERS were available (with no spare CPU it cannot
    /// exceed its share, so nothing is measured).
    pub fn workers_check(workers: u32, cores_used: f64, server_cpus: u32) -> Option<LabWarning> {
        (server_cpus > workers && cores_used > workers as f64 + WORKERS_SLACK_CORES).then_some(LabWarning::WorkersExceeded {
            workers,
            cores_used,
            server_cpus,
        })
    }

    /// The serialized `kind` tag: what a report groups repeated warnings by.
    pub fn kind(&self) -> &'static str {
        match self {
            LabWarning::ServerDied { .. } => "server_died",
            LabWarning::BackgroundNoise { .. } => "background_noise",
            LabWarning::MemoryGrowth { .. } => "memory_growth",
            LabWarning::CpuSteal { .. } => "cpu_steal",
            LabWarning::WorkersExceeded { .. } => "workers_exceeded",
            LabWarning::ProcessesLeftBehind { .. } => "processes_left_behind",
            LabWarning::StaleAfterLoad { .. } => "stale_after_load",
            LabWarning::CostAfterLoad { .. } => "cost_after_load",
            LabWarning::NotQuietBeforeTrial { .. } => "not_quiet_before_trial",
            LabWarning::DeliberateBug { .. } => "deliberate_bug",
            LabWarning::BusyWhileIdle { .. } => "busy_while_idle",
            LabWarning::Unmanaged { .. } => "unmanaged",
            LabWarning::WorkNotProven { .. } => "work_not_proven",
        }
    }

    /// How bad this instance is, comparable only within one kind (see `Warning::severity`).
    pub fn severity(&self) -> f64 {
        match self {
            LabWarning::BackgroundNoise { cpu_percent } | LabWarning::CpuSteal { cpu_percent } => *cpu_percent,
            LabWarning::NotQuietBeforeTrial { cpu_percent } | LabWarning::BusyWhileIdle { cpu_percent } => *cpu_percent,
            LabWarning::MemoryGrowth { mib_per_min } => *mib_per_min,
            LabWarning::WorkersExceeded { workers, cores_used, .. } => cores_used - *workers as f64,
            LabWarning::ProcessesLeftBehind { processes } => processes.len() as f64,
            LabWarning::ServerDied { .. }
            | LabWarning::StaleAfterLoad { .. }
            | LabWarning::CostAfterLoad { .. }
            | LabWarning::DeliberateBug { .. }
            | LabWarning::Unmanaged { .. }
            | LabWarning::WorkNotProven { .. } => 1.0,
        }
    }

    /// What happened, in a sentence with this instance's figures.
    pub fn message(&self) -> String {
        match self {
            LabWarning::ServerDied { exit } => format!("server died during measurement ({exit})"),
            LabWarning::BackgroundNoise { cpu_percent } => {
                format!("other processes used {cpu_percent:.0}% CPU during measurement")
            }
            LabWarning::MemoryGrowth { mib_per_min } => format!("memory grows {mib_per_min:.2} MiB/min"),
            LabWarning::CpuSteal { cpu_percent } => format!("the hypervisor stole {cpu_percent:.0}% of a core during measurement"),
            LabWarning::WorkersExceeded { workers, cores_used, server_cpus } => {
                format!("server used {cores_used:.2} cores with WORKERS={workers} ({server_cpus} server CPUs)")
            }
            LabWarning::ProcessesLeftBehind { processes } => {
                format!("left running after its stop (SIGTERM + SIGKILL to its process group): {}", processes.join(", "))
            }
            LabWarning::StaleAfterLoad { scenario, reason } => format!("{scenario}: answer went stale under load: {reason}"),
            LabWarning::CostAfterLoad { scenario, reason } => {
                format!("{scenario}: the work stopped costing what it claims under load (CPU-cost check rerun after the trial): {reason}")
            }
            LabWarning::NotQuietBeforeTrial { cpu_percent } => {
                format!(
                    "other processes used {cpu_percent:.0}% of a core on the trial's CPUs when it started, after the lab's bounded wait for quiet"
                )
            }
            LabWarning::DeliberateBug { reproduces } => format!("deliberate reproduction of a bug: {reproduces}"),
            LabWarning::Unmanaged { pid: None, .. } => "unmanaged server: capacity and latency only".into(),
            LabWarning::Unmanaged { pid: Some(pid), on_client_cpus, server_cpus } if !on_client_cpus.is_empty() => format!(
                "unmanaged server: CPU and memory of pid {pid}'s process tree, which may also run on the client's CPU {} (pin it: taskset -apc {} {pid})",
                cpu_list(on_client_cpus),
                cpu_list(server_cpus)
            ),
            LabWarning::Unmanaged { pid: Some(pid), .. } => {
                format!("unmanaged server: CPU and memory of pid {pid}'s process tree, on whatever CPUs it runs")
            }
            LabWarning::WorkNotProven { scenario } => format!(
                "work not proven: {scenario}'s answers were checked, but no live-data probe, cost pair or statement count proved the server did the work behind them"
            ),
            LabWarning::BusyWhileIdle { cpu_percent } => {
                format!("the server used {cpu_percent:.1}% of a core while idle beside the others (block schedule), which its peers' slices paid for; it is measured alone from its next launch on")
            }
        }
    }

    /// What the reader should do about it.
    pub fn advice(&self) -> &'static str {
        match self {
            LabWarning::ServerDied { .. } => "see the server log in the run directory; the cell's numbers are partial",
            LabWarning::BackgroundNoise { .. } => "stop other work on the machine and rerun; noise hits cells unevenly",
            LabWarning::MemoryGrowth { .. } => "run `bakeoff run --soak 5m` on this cell to see whether it levels off",
            LabWarning::CpuSteal { .. } => "a virtual machine shares its host: rerun when the host is quieter, or use dedicated cores",
            LabWarning::WorkersExceeded { .. } => {
                "the stack does not honour WORKERS (docs/stacks.md): fix its start command, or compare it on one server CPU"
            }
            LabWarning::ProcessesLeftBehind { .. } => {
                "a process outside the server's group ran beside the measurement (and would beside the next cells): keep every process in the group and stop them all on SIGTERM"
            }
            LabWarning::StaleAfterLoad { .. } => {
                "the stack caches what the contract says to read on every request (perhaps only once warm): read the store per request"
            }
            LabWarning::CostAfterLoad { .. } => {
                "the stack skips the contract's work once it has served some requests (a cache, a memo, a formula): do the work on every request, as docs/scenarios.md says"
            }
            LabWarning::NotQuietBeforeTrial { .. } => "stop other work on the machine (see `top`) and rerun; this trial started beside it",
            LabWarning::DeliberateBug { .. } => "compare it only with its own stack's fixed variant: that difference is what the bug costs",
            LabWarning::Unmanaged { pid: Some(_), .. } => {
                "bakeoff did not start it (no process group, cgroup, pinned CPUs or WORKERS): keep it on the server CPUs, or use --cmd to let bakeoff start it like any stack"
            }
            LabWarning::Unmanaged { pid: None, .. } => {
                "bakeoff did not start it (no process group, cgroup, pinned CPUs or WORKERS): pass --pid for its CPU and memory, or --cmd to let bakeoff start it like any stack"
            }
            LabWarning::WorkNotProven { .. } => {
                "a cached or precomputed answer would pass: read its figures as what the answers cost, not the work; no claim about it is judged"
            }
            LabWarning::BusyWhileIdle { .. } => {
                "its later launches are its own, so its slices are paired with its peers' in time less closely: find what the idle server does (a timer, a GC, a pool's keep-alive), or measure with `--schedule trials`"
            }
        }
    }

    /// The trial measured no CPU of the server (an unmanaged server without its pid): its CPU per
    /// request is no figure to rank by.
    pub fn cpu_unmeasured(&self) -> bool {
        matches!(self, LabWarning::Unmanaged { pid: None, .. })
    }

    /// Whether a trial with this warning describes a broken or unfair server: its cell is shown
    /// but never ranked, claimed about or called fastest.
    pub fn disqualifies(&self) -> bool {
        match self {
            // More cores than WORKERS is more resources than its peers had: an unfair comparison.
            LabWarning::ServerDied { .. }
            | LabWarning::ProcessesLeftBehind { .. }
            | LabWarning::StaleAfterLoad { .. }
            | LabWarning::CostAfterLoad { .. }
            | LabWarning::WorkersExceeded { .. }
            // A deliberate reproduction is measured to show what its bug costs, not to compete.
            | LabWarning::DeliberateBug { .. } => true,
            LabWarning::BackgroundNoise { .. }
            | LabWarning::CpuSteal { .. }
            | LabWarning::MemoryGrowth { .. }
            | LabWarning::NotQuietBeforeTrial { .. }
            | LabWarning::BusyWhileIdle { .. }
            | LabWarning::Unmanaged { .. }
            | LabWarning::WorkNotProven { .. } => false,
        }
    }
}

/// CPUs as `taskset` takes them: `0,2`.
fn cpu_list(cpus: &[usize]) -> String {
    cpus.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `kind()` must be the serialized tag (what the JSON report and the store say), for every variant.
    #[test]
    fn lab_warning_kind_is_the_serialized_tag() {
        let all = [
            LabWarning::ServerDied { exit: "exit status: 1".into() },
            LabWarning::BackgroundNoise { cpu_percent: 12.0 },
            LabWarning::MemoryGrowth { mib_per_min: 3.0 },
            LabWarning::CpuSteal { cpu_percent: 7.0 },
            LabWarning::WorkersExceeded { workers: 1, cores_used: 1.8, server_cpus: 2 },
            LabWarning::ProcessesLeftBehind { processes: vec!["pid 7 (`sleep 9`)".into()] },
            LabWarning::StaleAfterLoad { scenario: Scenario::Products, reason: "JSON differs".into() },
            LabWarning::CostAfterLoad { scenario: Scenario::Json, reason: "/json?n=1000 costs the same as n=1".into() },
            LabWarning::NotQuietBeforeTrial { cpu_percent: 40.0 },
            LabWarning::DeliberateBug { reproduces: "a regex compiled per request".into() },
            LabWarning::BusyWhileIdle { cpu_percent: 3.5 },
            LabWarning::Unmanaged { pid: None, on_client_cpus: vec![], server_cpus: vec![] },
            LabWarning::Unmanaged { pid: Some(7), on_client_cpus: vec![1], server_cpus: vec![0] },
            LabWarning::WorkNotProven { scenario: Scenario::File(crate::scenario::FileScenario::named("shop")) },
        ];
        for w in &all {
            assert_eq!(serde_json::to_value(w).unwrap()["kind"], w.kind(), "{w:?}");
        }
        // Only an unmanaged server without its pid has no CPU to rank by, and none disqualifies.
        let unmeasured: Vec<&LabWarning> = all.iter().filter(|w| w.cpu_unmeasured()).collect();
        assert_eq!(unmeasured, [&all[11]]);
    }

    #[test]
    fn an_unmanaged_server_that_may_run_on_the_client_s_cpus_is_told_how_to_pin_it() {
        let clash = LabWarning::Unmanaged { pid: Some(42), on_client_cpus: vec![1, 3], server_cpus: vec![0, 2] };
        assert!(clash.message().ends_with("may also run on the client's CPU 1,3 (pin it: taskset -apc 0,2 42)"), "{}", clash.message());
        // Trials stored before the CPUs were checked read back as no clash.
        let old: LabWarning = serde_json::from_str(r#"{"kind":"unmanaged","pid":7}"#).unwrap();
        assert_eq!(old, LabWarning::Unmanaged { pid: Some(7), on_client_cpus: vec![], server_cpus: vec![] });
        assert_eq!(serde_json::to_string(&old).unwrap(), r#"{"kind":"unmanaged","pid":7}"#);
    }

    #[test]
    fn the_worker_check_needs_spare_cpus_and_more_than_half_a_core_beyond_workers() {
        assert!(LabWarning::workers_check(1, 1.9, 2).is_some());
        assert!(LabWarning::workers_check(1, 1.4, 2).is_none(), "a relaying front or runtime threads");
        assert!(LabWarning::workers_check(1, 1.9, 1).is_none(), "one CPU: no spare to spread over");
        assert!(LabWarning::workers_check(2, 1.9, 2).is_none());
        assert!(LabWarning::workers_check(2, 2.9, 4).is_some());
    }
}
