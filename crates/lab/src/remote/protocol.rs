//! The agent's protocol: one JSON object per line each way, a request and its reply, and what they
//! carry (the load spec a client runs is in [`super::spec`]).

use std::collections::BTreeMap;

use bakeoff_model::records::noise::TrialNoise;
use bakeoff_model::records::results::{MachineInfo, ProcessSample};
use serde::{Deserialize, Serialize};

pub use super::spec::{ClientResult, RunSpec, StepHistograms};
use crate::machine::cpu_meter::CpuReading;
use crate::machine::doctor::Governor;
pub use crate::services::StartedService;
use bakeoff_model::scenario::ServiceKind;

/// What the controller asks; the agent answers each with one [`Reply`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// Who are you: version, commit, process id.
    Hello,
    /// The agent's wall clock, for the clock offset (t0, t1, t2).
    Clock,
    /// Run a load at an instant and answer its report with the histograms.
    Run {
        /// What to run and when.
        spec: Box<RunSpec>,
    },
    /// Stop a running load early; its reply still comes, flagged cancelled. Never answered itself.
    Cancel,
    /// Is process `pid` there (the server, as this host numbers it)? Asked before any load.
    Check {
        /// The process whose tree is the server.
        pid: u32,
    },
    /// Watch the tree of `pid` from an instant on, until `unwatch`: its CPU, its memory, the noise.
    Watch {
        /// The process whose tree is the server.
        pid: u32,
        /// When the measurement starts (the load's start plus its warmup), ns since the epoch on
        /// the agent's clock.
        zero_at_ns: u64,
    },
    /// Stop watching and answer what was measured.
    Unwatch,
    /// Listen on `bind` (an address of this host, port 0) for `open_ms`, counting what each
    /// connection sends: the far end of a link-ceiling probe.
    Sink {
        /// The address to listen on, without a port.
        bind: String,
        /// How long the listener stays open, ms.
        open_ms: u64,
    },
    /// Measure the path from this host to the server: round trips by TCP connects to `target`,
    /// and the link's ceiling by sending to `sink` for `send_ms`.
    Probe {
        /// The server's address (`ip:port`, the load's).
        target: String,
        /// How many connects the round trip is the median of.
        connects: u32,
        /// The server host's sink (`ip:port`), when there is one.
        sink: Option<String>,
        /// How long to send to the sink, ms.
        send_ms: u64,
    },
    /// Does the project's workspace hold the files `id` ([`super::workspace`])? Answered with its path.
    Workspace {
        /// The controller's project (hex digits): one workspace each.
        project: String,
        /// The packed files' name (hex digits).
        id: String,
    },
    /// Unpack the files `id` over the project's workspace from a base64 tar; answered as `workspace`.
    Unpack {
        /// The controller's project.
        project: String,
        /// The packed files' name.
        id: String,
        /// The tar, base64.
        tar_b64: String,
    },
    /// Set up these stacks in the workspace at `root` (cached there); answered when all are done.
    Setup {
        /// The workspace's path on the host.
        root: String,
        /// Stack names (`language/folder`).
        stacks: Vec<String>,
    },
    /// Start a server; it runs until `stop` or the session's end.
    Start {
        /// What to start.
        launch: Box<RemoteLaunch>,
    },
    /// The CPU time of a started server's tree, and whether it exited.
    Tree {
        /// The started server.
        pid: u32,
    },
    /// Wait (at most `limit_ms`) for a started server's tree to go quiet over `window_ms`.
    Quiet {
        /// The started server.
        pid: u32,
        /// The window it must be quiet over, ms.
        window_ms: u64,
        /// The longest wait, ms.
        limit_ms: u64,
    },
    /// Stop a started server with its whole group.
    Stop {
        /// The started server.
        pid: u32,
    },
    /// The precise CPU reading of a started server's tree (per-process CPU clocks and ticks).
    Cpu {
        /// The started server.
        pid: u32,
    },
    /// The addresses listening on `port` in a started server's network namespace.
    Listening {
        /// The started server.
        pid: u32,
        /// The port asked about.
        port: u16,
    },
    /// Make a folder for the run `run` on the host, with the run's fixtures (`DATA_DIR`) unpacked
    /// from a base64 tar into its `data`; answered with its path. Its cells' folders go under it.
    RunFolder {
        /// The run's id (letters, digits and dashes).
        run: String,
        /// The fixtures, a tar in base64.
        data_tar_b64: String,
    },
    /// Remove a run folder this session made (its servers' logs with it).
    Discard {
        /// The run folder, as `run_folder` answered it.
        path: String,
    },
    /// Start a backing service (PostgreSQL, nginx, the document store) for a run, on this host:
    /// answered when it listens, seeded from the run's fixtures.
    StartService {
        /// What to start and where.
        service: Box<ServiceLaunch>,
    },
    /// Set a text column of a `product` row in a SQLite file of one of this session's run folders
    /// (the live-data probe of a server on this host, whose cell's file is here).
    SetProductText {
        /// The file, under a run folder this session made.
        path: String,
        /// The id column.
        key: String,
        /// The row's id.
        id: i64,
        /// The text column.
        field: String,
        /// Its new value.
        value: String,
    },
    /// End the session: the agent answers and exits.
    Bye,
}

/// A backing service to start on the agent's host. Paths are the host's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServiceLaunch {
    /// Which service.
    pub kind: ServiceKind,
    /// The project's workspace there (nginx's configuration, the document store's sources).
    pub root: String,
    /// The run's folder there, as `run_folder` answered it: the service's folder goes in it, its
    /// fixtures come from its `data`.
    pub run_folder: String,
    /// The CPUs it is held on (empty: not pinned).
    pub cpus: Vec<usize>,
    /// The address it listens on: the host's own, as the controller reaches it.
    pub ip: std::net::IpAddr,
    /// Addresses of other hosts that must reach it (the servers'), trusted by PostgreSQL besides
    /// the host's own subnet and the controller's address.
    pub trust: Vec<std::net::IpAddr>,
}

/// The agent's answer to one [`Request`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum Reply {
    /// The agent's build and process.
    Hello(Hello),
    /// The agent's wall clock.
    Clock {
        /// Nanoseconds since the Unix epoch on the agent's host.
        wall_ns: u64,
    },
    /// A finished load.
    Ran {
        /// Its report and histograms.
        result: Box<ClientResult>,
    },
    /// The process asked about is there.
    Process(ProcessFound),
    /// The watch is set; it starts at its instant.
    Watching,
    /// What the watch measured.
    Watched {
        /// The server's tree over the measurement.
        server: Box<ServerMeasure>,
    },
    /// The sink listens on this port.
    Sink {
        /// The port of the sink, on the address asked for.
        port: u16,
    },
    /// The path from this host to the server.
    Probed {
        /// Its round trip and ceiling.
        path: PathMeasure,
    },
    /// A workspace's path on the host and whether it is unpacked whole.
    Workspace {
        /// Its folder.
        path: String,
        /// Unpacked whole: nothing needs sending.
        ready: bool,
    },
    /// The stacks asked for are set up.
    SetUp {
        /// Those whose setup failed, each with why.
        failed: Vec<String>,
        /// What each stack set up there recorded of its versions (`name version` lines), by stack.
        #[serde(default)]
        versions: BTreeMap<String, String>,
    },
    /// A server started.
    Started {
        /// Its pid on the host.
        pid: u32,
        /// The free port the agent chose for it, when the launch asked for one.
        #[serde(default)]
        port: Option<u16>,
    },
    /// A started server's tree's CPU, read now.
    Cpu(CpuReading),
    /// The addresses listening on the port asked about.
    Listening {
        /// Each address (without the port).
        addrs: Vec<std::net::IpAddr>,
    },
    /// A run's folder on the host, its fixtures in `data` under it.
    RunFolder {
        /// Its path on the host.
        path: String,
    },
    /// The run folder is gone.
    Discarded,
    /// A started server's tree.
    Tree(TreeState),
    /// A started server's tree went quiet (`busy_cores` None), or was still this busy at the limit.
    Quiet {
        /// Cores its tree used over the last window, when it did not go quiet.
        busy_cores: Option<f64>,
    },
    /// A started server stopped.
    Stopped {
        /// Processes of it still running outside its group, killed then.
        leftovers: Vec<String>,
    },
    /// A backing service started.
    ServiceStarted(StartedService),
    /// The row was changed.
    ProductTextSet,
    /// The request could not be done; the session stays usable.
    Error {
        /// Why, worded for the user.
        message: String,
    },
    /// The agent is exiting.
    Bye,
}

/// A server to start on the agent's host, as the controller describes it. Paths are the host's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RemoteLaunch {
    /// Its name in messages and in its marker.
    pub name: String,
    /// The command, run as `sh -c command`.
    pub command: String,
    /// Its working directory (a stack folder of the host's workspace).
    pub dir: String,
    /// Environment added to the agent's own.
    pub env: BTreeMap<String, String>,
    /// The CPUs it is held on (empty: not pinned).
    pub cpus: Vec<usize>,
    /// The file its output goes to; its folder is made.
    pub log: String,
    /// Files copied before it starts (from, to): a cell's own copy of a fixture it may change.
    #[serde(default)]
    pub copies: Vec<[String; 2]>,
    /// The variable that gets a free port of the host (`PORT`), chosen there and answered.
    #[serde(default)]
    pub port_var: Option<String>,
}

/// The state of a started server's tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TreeState {
    /// CPU seconds its tree has used so far (user and system).
    pub cpu_s: f64,
    /// How the server exited, when it has.
    pub exited: Option<String>,
    /// The end of its log, once it exited (what it said before it went).
    #[serde(default)]
    pub log_tail: Option<String>,
}

/// A bakeoff build: its version and git commit. Controller and agent must agree on both.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    /// The crate version.
    pub version: String,
    /// The git commit it was built from (`unknown` outside a checkout).
    pub commit: String,
}

impl std::fmt::Display for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (commit {})", self.version, self.commit)
    }
}

/// The agent's answer to hello.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hello {
    /// Its build.
    pub identity: Identity,
    /// Its process id on its host (tests kill it by this; messages name it).
    pub pid: u32,
    /// Its host's name (`/proc/sys/kernel/hostname`).
    pub hostname: String,
    /// What the host is (absent from an agent that does not say).
    #[serde(default)]
    pub facts: Option<MachineFacts>,
    /// Its kernel's boot id (`/proc/sys/kernel/random/boot_id`): equal to the controller's when the
    /// agent runs on this machine (in a namespace of it, or over ssh into one), whose processes the
    /// lab then sees and counts as its own.
    #[serde(default)]
    pub boot_id: Option<String>,
    /// What servers of agents that no longer run had left on the host, stopped as this agent
    /// started (a line each).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reaped: Vec<String>,
}

/// This kernel's boot id, None where it is not exposed.
pub fn boot_id() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

/// What a host is, for the "what ran" of a run: the machine, its governor, the agent's CPUs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MachineFacts {
    /// CPU model, cores, kernel, memory, OS, host name (as the lab describes its own machine).
    pub machine: MachineInfo,
    /// The frequency governor; None where cpufreq is not exposed (most VMs).
    pub governor: Option<Governor>,
    /// The CPUs the agent may run on (its affinity: a cpuset or `taskset` narrows it).
    pub cpuset: Vec<usize>,
}

/// A process found on the server's host, before the load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessFound {
    /// Its pid.
    pub pid: u32,
    /// Its command name (`comm`).
    pub name: String,
    /// Processes in its tree (its group and every descendant).
    pub processes: u32,
    /// The CPUs it may run on.
    pub cpus: Vec<usize>,
}

/// The server's tree over a measurement, sampled by its own host's agent as the lab samples a
/// server locally.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerMeasure {
    /// The process watched.
    pub process: ProcessFound,
    /// User + system CPU seconds of the tree over the measurement (the precise meter: CPU clocks
    /// checked against the tick counters).
    pub cpu_s: f64,
    /// The wall time watched, seconds.
    pub wall_s: f64,
    /// Highest RSS of the tree over the samples.
    pub peak_rss_bytes: u64,
    /// Mean RSS of the tree over the samples.
    pub mean_rss_bytes: u64,
    /// The samples (every 250 ms), times from the measurement's start.
    pub samples: Vec<ProcessSample>,
    /// Steal and other processes' CPU on the host over the watch (every CPU, as one set).
    pub noise: TrialNoise,
}

/// The path from a client host to the server, measured before the load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PathMeasure {
    /// The server's address the round trips went to.
    pub target: String,
    /// Connects that succeeded (the round trip is their median).
    pub connects: u32,
    /// The median TCP connect time (SYN to SYN-ACK: one round trip plus the kernels' work), µs.
    pub rtt_median_us: f64,
    /// The fastest connect, µs.
    pub rtt_min_us: f64,
    /// The slowest connect, µs.
    pub rtt_max_us: f64,
    /// Bytes the sink counted (None without a sink).
    pub sent_bytes: Option<u64>,
    /// Bytes/s from this host to the server host: bytes the sink counted over the time from the
    /// first write to the sink's count coming back.
    pub ceiling_bytes_per_s: Option<f64>,
    /// Bytes the sink sent back and this host read (None without a sink).
    #[serde(default)]
    pub back_bytes: Option<u64>,
    /// Bytes/s from the server host to this one, the way responses go: what the sink sent back
    /// over the time from its count's arrival to its end of stream.
    #[serde(default)]
    pub ceiling_back_bytes_per_s: Option<f64>,
    /// Why a part of the path could not be measured.
    pub problem: Option<String>,
}

/// Nanoseconds since the Unix epoch on this host's wall clock.
pub fn wall_ns() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_load::LoadPlan;
    use std::time::Duration;

    #[test]
    fn a_plan_goes_through_its_spec_unchanged() {
        let plan = LoadPlan::builder("http://127.0.0.1:9/a")
            .url("http://127.0.0.1:9/b")
            .connections(4)
            .threads(2)
            .rate(500.0)
            .header("X-A", "1")
            .body("hi")
            .expect_status(200)
            .warmup(Duration::from_millis(300))
            .build()
            .unwrap();
        let spec = RunSpec::from_plan(&plan);
        let line = serde_json::to_string(&Request::Run { spec: Box::new(spec.clone()) }).unwrap();
        let Request::Run { spec: back } = serde_json::from_str(&line).unwrap() else { panic!("{line}") };
        assert_eq!(back.to_plan().unwrap(), plan);
        let ramp = LoadPlan::builder("http://127.0.0.1:9/").ramp(bakeoff_load::Ramp::parse("10:10:1s:20:3s").unwrap()).build().unwrap();
        let ladder = LoadPlan::builder("http://127.0.0.1:9/").threads(1).conn_ladder(vec![1, 4]).step_duration(Duration::from_secs(2));
        for plan in [ramp, ladder.build().unwrap()] {
            let line = serde_json::to_string(&RunSpec::from_plan(&plan)).unwrap();
            assert_eq!(serde_json::from_str::<RunSpec>(&line).unwrap().to_plan().unwrap(), plan, "a ramp and a ladder go through too");
        }
    }

    #[test]
    fn a_service_start_and_its_answer_read_back_as_sent() {
        let service = ServiceLaunch {
            kind: ServiceKind::Postgres,
            root: "/w".into(),
            run_folder: "/tmp/r".into(),
            cpus: vec![0],
            ip: "10.0.0.5".parse().unwrap(),
            trust: vec!["10.0.0.4".parse().unwrap()],
        };
        let line = serde_json::to_string(&Request::StartService { service: Box::new(service.clone()) }).unwrap();
        assert!(line.starts_with(r#"{"op":"start_service","service":{"kind":"postgres","#), "{line}");
        assert_eq!(serde_json::from_str::<Request>(&line).unwrap(), Request::StartService { service: Box::new(service) });
        let started = StartedService {
            kind: ServiceKind::Nginx,
            pid: 7,
            address: "10.0.0.5:8080".parse().unwrap(),
            url: "http://10.0.0.5:8080".into(),
            version: "nginx/1.22.1".into(),
        };
        let line = serde_json::to_string(&Reply::ServiceStarted(started.clone())).unwrap();
        assert!(line.starts_with(r#"{"reply":"service_started","kind":"nginx","pid":7,"address":"10.0.0.5:8080""#), "{line}");
        assert_eq!(serde_json::from_str::<Reply>(&line).unwrap(), Reply::ServiceStarted(started));
    }

    #[test]
    fn requests_and_replies_are_one_line_each() {
        assert_eq!(serde_json::to_string(&Request::Clock).unwrap(), r#"{"op":"clock"}"#);
        let r: Reply = serde_json::from_str(r#"{"reply":"clock","wall_ns":5}"#).unwrap();
        assert_eq!(r, Reply::Clock { wall_ns: 5 });
    }
}
