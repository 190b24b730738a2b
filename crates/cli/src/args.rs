//! Command-line arguments of every subcommand, with their defaults and help in one place.

use bakeoff_model::plan::goal::{parse_percent, AaCell, PrimaryMetric};
use bakeoff_model::scenario::Scenario;
use bakeoff_model::slo::Slo;
use bakeoff_model::study::RampSetting;
use bakeoff_report::Format;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::time::Duration;

/// `500ms`, `10s`, `5m`: parsed once, here, with the wording of every other duration.
fn duration(s: &str) -> Result<Duration, String> {
    bakeoff_model::duration::parse_duration(s)
}

/// CPU numbers this machine has, e.g. `0,1` (a type of its own: clap reads `Option<Vec<_>>` as a
/// repeated flag).
#[derive(Debug, Clone)]
pub struct CpuList(pub Vec<usize>);

fn primary(s: &str) -> Result<PrimaryMetric, String> {
    s.parse()
}

fn aa_cell(s: &str) -> Result<AaCell, String> {
    s.parse()
}

fn slo_objective(s: &str) -> Result<Slo, String> {
    s.parse().map_err(|e: bakeoff_model::slo::SloParseError| e.to_string())
}

fn cpus(s: &str) -> Result<CpuList, String> {
    bakeoff_lab::machine::provenance::parse_cpu_list(s).map(CpuList)
}

#[derive(Parser)]
#[command(name = "bakeoff", version, about = "Fair, reproducible benchmarks of web backends across languages")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Load-test an HTTP/1.1 server (wrk-like flags; open model with --rate; --client for other hosts)
    Load(LoadCommandArgs),
    /// Write the scenario fixtures into a directory
    Fixtures(FixturesArgs),
    /// List stacks, their scenarios and whether their toolchain is present
    Stacks(StacksArgs),
    /// List the study files, each with its cells, trials and estimated time on this machine
    Studies(StudiesArgs),
    /// Install and build stacks (cached: redone only when their files change)
    Setup(SetupArgs),
    /// Start stacks and check every scenario contract, without measuring
    Verify(VerifyArgs),
    /// Verify and measure stacks x scenarios x variants, store the results, write the report
    Run(RunArgs),
    /// Show a stored run as text, markdown, csv, json or html
    Report(ReportArgs),
    /// List the runs in the results database, newest first
    Runs(RunsArgs),
    /// Compare two stored runs cell by cell: changes with 95% intervals and verdicts
    Compare(CompareArgs),
    /// The A/B verdicts of the results file's successive runs (`bench --cmd A --cmd B`): a trend
    /// per scenario and metric, with the change since the first run
    History(HistoryArgs),
    /// Check this machine: cores, governor, steal, other processes, cgroups, io_uring, and its
    /// noise floor from a 25-second A/A measurement, with the precision a study can expect here
    Doctor(DoctorArgs),
    /// Measure your own server (a start command) beside stacks, with a run's full rigour
    Bench(Box<BenchArgs>),
    /// Write a new stack folder (from a template, another stack or a command) and verify it
    New(NewArgs),
    /// Scenario files: lint one, and verify a running server against it
    #[command(subcommand)]
    Scenario(ScenarioCommand),
    /// The agent a controller starts on a client host over ssh: JSON lines on stdin and stdout
    #[command(hide = true)]
    Agent,
}

#[derive(Subcommand)]
pub enum ScenarioCommand {
    /// Lint a scenario file: its errors with the line, its mix, ten requests of its deck, its
    /// warnings; with --url, verify a running server against it
    Check(ScenarioCheckArgs),
}

#[derive(Args)]
pub struct ScenarioCheckArgs {
    /// The scenario file (TOML; see docs/scenarios.md, "Scenario files")
    pub file: PathBuf,
    /// A server already running on loopback, e.g. http://127.0.0.1:8080, to verify against the file
    #[arg(long)]
    pub url: Option<String>,
}

/// `bakeoff load`: the load generator's flags, and where the load runs from.
#[derive(Args)]
pub struct LoadCommandArgs {
    #[command(flatten)]
    pub load: bakeoff_cli::load::LoadArgs,
    #[command(flatten)]
    pub hosts: bakeoff_cli::load::ClientArgs,
}

#[derive(Args)]
pub struct DoctorArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Only the quick facts (a few seconds): skip the noise floor's A/A measurement
    #[arg(long)]
    pub quick: bool,
}

#[derive(Args, Clone)]
pub struct CommonArgs {
    /// The project folder holding stacks/ and services/ (default: found from the current folder)
    #[arg(long, env = "BAKEOFF_ROOT")]
    pub root: Option<PathBuf>,
}

#[derive(Args)]
pub struct StacksArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Print a Markdown table (as in the README)
    #[arg(long)]
    pub markdown: bool,
}

#[derive(Args)]
pub struct StudiesArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Print a Markdown table (as in the README)
    #[arg(long)]
    pub markdown: bool,
}

#[derive(Args)]
pub struct FixturesArgs {
    pub dir: PathBuf,
}

#[derive(Args)]
pub struct SetupArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Stacks to set up: names (`go/fasthttp`), languages (`go`) or `all`
    #[arg(value_delimiter = ',')]
    pub stacks: Vec<String>,
    /// Set up every stack
    #[arg(long)]
    pub all: bool,
    /// Redo the setup even when nothing changed
    #[arg(long)]
    pub force: bool,
    /// Plain progress lines (at most one every 5 s) instead of a live line, even on a terminal
    #[arg(long)]
    pub quiet: bool,
    /// Set the stacks up on this host instead of here, `ssh://user@host[:port]` or `netns:NAME`:
    /// the project's files are sent there first (once), and the setup is cached there
    #[arg(long)]
    pub host: Option<bakeoff_model::plan::place::Place>,
    #[command(flatten)]
    pub agent: AgentArgs,
}

#[derive(Args)]
pub struct Selection {
    /// Stacks: names (`go/fasthttp`), languages (`go`) or `all`
    #[arg(long, value_delimiter = ',')]
    pub stacks: Vec<String>,
    /// Scenarios (default: every scenario each stack implements; hello for `bench`)
    #[arg(long, value_delimiter = ',')]
    pub scenarios: Vec<Scenario>,
    /// A scenario file (docs/scenarios.md, "Scenario files"): its workload is measured as the
    /// scenario `file:NAME` by the stacks that serve it (a `bench` server does); or a built-in name
    #[arg(long)]
    pub scenario: Option<String>,
    /// Variants (default: all)
    #[arg(long, value_delimiter = ',')]
    pub variants: Vec<String>,
    /// Use this MongoDB instead of starting the bundled MongoDB-protocol server
    #[arg(long)]
    pub docstore: Option<String>,
}

#[derive(Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Stacks to verify (positional form of --stacks)
    #[arg(value_delimiter = ',')]
    pub names: Vec<String>,
    #[command(flatten)]
    pub selection: Selection,
    /// Where verification results are stored
    #[arg(long, default_value = "results/bakeoff.db")]
    pub db: PathBuf,
    /// Print the report as JSON
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// A study file (stacks, scenarios, load, claims); flags override it. Default: studies/quick.toml,
    /// or with --stacks and no study an ad-hoc run of those stacks (built-in defaults and flags only)
    #[arg(long)]
    pub study: Option<PathBuf>,
    #[command(flatten)]
    pub selection: Selection,
    /// Worker counts to measure (WORKERS)
    #[arg(long, value_delimiter = ',')]
    pub workers: Vec<u32>,
    /// Trials per cell (blocks, under the block schedule)
    #[arg(long)]
    pub trials: Option<u32>,
    /// `blocks` (the default: a scenario's servers side by side, short slices in a fresh random
    /// order per block, paired ratios), `at-once` (the same blocks, each loading the scenario's
    /// cells together on equal CPU shares: the tightest ratios on a noisy machine) or `trials` (a
    /// fresh server per trial, cells in turn)
    #[arg(long)]
    pub schedule: Option<bakeoff_model::plan::schedule::Schedule>,
    /// Block schedules: how many times the servers start over the blocks [default: 3 from 6
    /// trials on, 2 below; at once, one per two trials from 6 on, up to 8]
    #[arg(long)]
    pub launches: Option<u32>,
    /// Measured time per trial (per slice, under the block schedule)
    #[arg(long, short = 'd', value_parser = duration)]
    pub duration: Option<Duration>,
    /// Load before measuring, excluded from the statistics
    #[arg(long, value_parser = duration)]
    pub warmup: Option<Duration>,
    #[arg(long, short = 'c')]
    pub connections: Option<u32>,
    /// Client threads
    #[arg(long, short = 't')]
    pub threads: Option<u32>,
    /// Open model: constant arrival rate, requests/s
    #[arg(long)]
    pub rate: Option<f64>,
    /// Open-model rate ramp START:STEP:STEP_DURATION:MAX[:HOLD], or `auto` (one ladder per cell at
    /// rates common to all, each up to 90% of its own maximum, measured first; needs c/baseline)
    #[arg(long)]
    pub ramp: Option<RampSetting>,
    /// After an open-model schedule, also measure the closed-model maximum
    #[arg(long)]
    pub max_throughput: bool,
    /// Skip the store ceiling (the database's own throughput for the products/document query)
    #[arg(long)]
    pub no_ceiling: bool,
    /// Reconnect after this many requests per connection
    #[arg(long)]
    pub requests_per_conn: Option<u64>,
    /// HTTP/2 streams in flight per connection for the cells served over h2 or h2c (default 1;
    /// HTTP/1.1 cells keep one request per connection)
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub streams: Option<u32>,
    /// What a core costs, `core-hour=PRICE` (e.g. core-hour=0.04): the reports then price a
    /// million requests at each cell's server CPU (over a study's `price`)
    #[arg(long, value_name = "core-hour=PRICE")]
    pub price: Option<bakeoff_model::plan::price::CorePrice>,
    /// Database connections per server process, passed to stacks as POOL_SIZE [default: 8]
    #[arg(long)]
    pub pool_size: Option<u32>,
    /// Keep one cell under load this long, sampling memory (one trial)
    #[arg(long, value_parser = duration)]
    pub soak: Option<Duration>,
    /// CPUs of the server and its services, e.g. `0` or `0-1`
    #[arg(long, value_parser = cpus)]
    pub server_cpus: Option<CpuList>,
    /// CPUs of the load generator
    #[arg(long, value_parser = cpus)]
    pub client_cpus: Option<CpuList>,
    /// Proxy study: `shared` (the proxy and nginx on the server CPUs, the default) or `own-cpu` (the
    /// proxy alone there, nginx beside the load generator)
    #[arg(long)]
    pub proxy_placement: Option<bakeoff_model::study::ProxyPlacement>,
    #[command(flatten)]
    pub hosts: RunHostArgs,
    /// Results database
    #[arg(long, default_value = "results/bakeoff.db")]
    pub db: PathBuf,
    /// Keep the run's scratch directory (logs, data) after the run
    #[arg(long)]
    pub keep: bool,
    /// Plain progress lines (at most one every 5 s) instead of a live line, even on a terminal
    #[arg(long)]
    pub quiet: bool,
    /// Rank cells by `capacity` (requests/s) or `efficiency` (server CPU µs per request)
    #[arg(long, value_parser = primary)]
    pub rank_by: Option<PrimaryMetric>,
    /// Keep adding rounds until every cell's 95% interval on the ranking metric is within this, e.g. 5%
    #[arg(long, value_parser = parse_percent)]
    pub precision: Option<f64>,
    /// Time the whole run may take while reaching --precision, e.g. 10m
    #[arg(long, value_parser = duration)]
    pub budget: Option<Duration>,
    /// Measure this cell twice per round (A/A) to show the noise floor, e.g. "rust/actix hello"
    #[arg(long, value_parser = aa_cell)]
    pub aa: Option<AaCell>,
    /// Find each cell's SLO capacity: the highest open-model rate whose latency (from the scheduled
    /// send time) meets this objective with errors below 0.1%, e.g. "p99<=10ms" (p50, p90, p99, p99.9; ms, us, s)
    #[arg(long, value_parser = slo_objective)]
    pub slo: Option<Slo>,
}

/// Where a run's load clients and servers go (over the study's `[hosts]`; docs/hosts.md).
#[derive(Args, Default)]
pub struct RunHostArgs {
    /// Load from this host's agent instead of from here; repeat for several clients, whose
    /// histograms are added exactly: `local`, `ssh://user@host[:port]` or `netns:NAME`
    #[arg(long = "client")]
    pub clients: Vec<bakeoff_model::plan::place::Place>,
    /// Start the servers here: `local` (the default) or `netns:NAME` (bound to the namespace's address)
    #[arg(long)]
    pub server_host: Option<bakeoff_model::plan::place::Place>,
    /// Start the services (PostgreSQL, nginx, the document store) here: `local` or `netns:NAME`
    #[arg(long)]
    pub services_host: Option<bakeoff_model::plan::place::Place>,
    #[command(flatten)]
    pub agent: AgentArgs,
}

impl RunHostArgs {
    /// How the lab reaches the agents: this build, started from `--agent-bin` or this binary's path.
    pub fn access(&self) -> std::io::Result<bakeoff_lab::run::roles::HostAccess> {
        Ok(bakeoff_lab::run::roles::HostAccess { options: self.agent.session_options()?, identity: bakeoff_cli::identity() })
    }
}

/// How the agents on other hosts are reached (docs/hosts.md).
#[derive(Args, Default)]
pub struct AgentArgs {
    /// The bakeoff binary on the other hosts, an absolute path (default: this binary's own path)
    #[arg(long)]
    pub agent_bin: Option<PathBuf>,
    /// The ssh key for the other hosts (default: the user's ssh config)
    #[arg(long)]
    pub ssh_identity: Option<PathBuf>,
    /// A known_hosts file that must hold the other hosts' keys (default: the user's own)
    #[arg(long)]
    pub ssh_known_hosts: Option<PathBuf>,
}

impl AgentArgs {
    /// The agents started from `--agent-bin` (or this binary's path), over ssh as the flags say.
    pub fn session_options(&self) -> std::io::Result<bakeoff_lab::remote::session::SessionOptions> {
        let bin = match &self.agent_bin {
            Some(b) => b.clone(),
            None => std::env::current_exe()?,
        };
        let mut options = bakeoff_lab::remote::session::SessionOptions::new(bin);
        options.ssh_identity = self.ssh_identity.clone();
        options.ssh_known_hosts = self.ssh_known_hosts.clone();
        Ok(options)
    }
}

#[derive(Args)]
pub struct BenchArgs {
    /// Your server's start command, run by `sh -c` in the current folder; it must serve on
    /// $HOST:$PORT (HOST is 127.0.0.1 unless --server-host places it) and may read $WORKERS (all
    /// set by the lab, like for every stack). Twice, `--cmd base='…' --cmd head='…'`, the two are
    /// measured side by side in one run and the report opens with B's (the second's) verdict
    /// against A (a lowercase `name=` names one; `GOGC=off ./server` stays a command)
    #[arg(long, conflicts_with = "url", value_name = "[NAME=]COMMAND")]
    pub cmd: Vec<String>,
    /// A server already running on loopback, e.g. http://127.0.0.1:8080: verified and measured,
    /// never started or stopped by bakeoff
    #[arg(long)]
    pub url: Option<String>,
    /// With --url: the server's process, whose tree's CPU and memory are then measured
    #[arg(long, requires = "url")]
    pub pid: Option<u32>,
    /// A command run once before (in the current folder; again when its files change), e.g. a build
    #[arg(long, requires = "cmd")]
    pub setup: Option<String>,
    /// Twice: two revisions of the current folder's git repository side by side (A/B), each checked
    /// out in a worktree of its own, built there by --setup and started there by the one --cmd
    /// (`--rev base=main --rev head=HEAD`; a bare revision names itself); the worktrees are
    /// removed when the run ends
    #[arg(long, requires = "cmd", value_name = "[NAME=]REVISION")]
    pub rev: Vec<String>,
    /// The name it is reported under, as `adhoc/NAME` (default: from the command)
    #[arg(long)]
    pub name: Option<String>,
    /// With two servers: exit 3 when B is worse than A beyond noise by more than this, on
    /// requests/s and CPU per request (`5%`), or on one metric (`cpu=3%`, `rps=3%`, `p99=10%`,
    /// `rss=10%`; repeatable); exit 4 when a gated metric has no 95% interval to judge
    #[arg(long, value_parser = parse_gate, value_name = "[METRIC=]PERCENT")]
    pub fail_if_slower: Vec<GateSpec>,
    /// Also write the run's Markdown report here (with two servers the verdict comes first): for a
    /// pull-request comment or a CI step summary
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// With two servers: also write the A/B as JUnit XML here, one test case per scenario and
    /// metric, failed where --fail-if-slower fails it (for CI systems that read test reports)
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// How long it may take to answer HTTP after its start
    #[arg(long, value_parser = duration, default_value = "30s")]
    pub ready_timeout: Duration,
    /// How requests travel: h1, h1-tls, h2 (over TLS, ALPN) or h2c (cleartext, prior knowledge).
    /// A started server reads it as $PROTOCOL, with the run's certificate as $TLS_CERT and $TLS_KEY
    /// (default: h1-tls for an https:// --url, else h1)
    #[arg(long, value_name = "PROTOCOL")]
    pub protocol: Option<bakeoff_model::protocol::WireProtocol>,
    #[command(flatten)]
    pub quick: QuickArgs,
    #[command(flatten)]
    pub run: RunArgs,
}

/// `bench`'s requests without a file, in the habit of wrk and oha: they become a scenario file.
#[derive(Args)]
pub struct QuickArgs {
    /// Measure GETs of this path (repeatable: the paths are sent in turn), e.g. --get /items/1
    #[arg(long, value_name = "PATH", conflicts_with = "scenario")]
    pub get: Vec<String>,
    /// With --get: a header `Name: value` on every request (repeatable)
    #[arg(short = 'H', long = "header", requires = "get")]
    pub headers: Vec<String>,
    /// With --get: the status every answer must have
    #[arg(long, requires = "get", default_value_t = 200)]
    pub expect_status: u16,
    /// With --get: the body every answer must have, exactly
    #[arg(long, requires = "get")]
    pub expect_body: Option<String>,
    /// With --get: write these requests and checks as a scenario file, to rerun with --scenario FILE
    #[arg(long, requires = "get")]
    pub save_scenario: Option<PathBuf>,
}

#[derive(Args)]
pub struct NewArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// The new stack, LANGUAGE/NAME (its folder is stacks/LANGUAGE/NAME)
    pub name: String,
    /// Copy this stack instead of the language's template (renamed; bug variants and seed dropped)
    #[arg(long)]
    pub like: Option<String>,
    /// The framework it is for, written into its manifest and README
    #[arg(long)]
    pub framework: Option<String>,
    /// Make it from a `bench --cmd` command: the current folder's files and this start command
    #[arg(long)]
    pub from_cmd: Option<String>,
    /// With --from-cmd: the setup command `bench --setup` used
    #[arg(long, requires = "from_cmd")]
    pub setup: Option<String>,
    /// Where the verification is stored
    #[arg(long, default_value = "results/bakeoff.db")]
    pub db: PathBuf,
}

#[derive(Args)]
pub struct CompareArgs {
    /// The run compared against (the baseline)
    pub run_a: String,
    /// The run compared (the candidate)
    pub run_b: String,
    #[arg(long, default_value = "results/bakeoff.db")]
    pub db: PathBuf,
    /// The comparison's format (csv is for reports only)
    #[arg(long, short = 'f', value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Exit 1 when any cell's primary metric got worse beyond noise by more than this, e.g. 5%
    #[arg(long, value_parser = parse_percent)]
    pub fail_if_slower: Option<f64>,
    /// The primary metric verdicts and the gate use (default: run B's study's rank_by)
    #[arg(long, value_parser = primary)]
    pub rank_by: Option<PrimaryMetric>,
    /// Write to this file instead of standard output
    #[arg(long, short = 'o')]
    pub out: Option<PathBuf>,
}

#[derive(Args)]
pub struct HistoryArgs {
    #[arg(long, default_value = "results/bakeoff.db")]
    pub db: PathBuf,
    /// The history's format (csv is for reports only)
    #[arg(long, short = 'f', value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Write to this file instead of standard output
    #[arg(long, short = 'o')]
    pub out: Option<PathBuf>,
}

#[derive(Args)]
pub struct ReportArgs {
    /// Run id (default: the newest run with measurements; `bakeoff runs` lists them)
    pub run: Option<String>,
    #[arg(long, default_value = "results/bakeoff.db")]
    pub db: PathBuf,
    /// The report's format
    #[arg(long, short = 'f', value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Write to this file instead of standard output
    #[arg(long, short = 'o')]
    pub out: Option<PathBuf>,
    /// What a core costs, `core-hour=PRICE`: the report prices a million requests at it (over the
    /// price the run was made with)
    #[arg(long, value_name = "core-hour=PRICE")]
    pub price: Option<bakeoff_model::plan::price::CorePrice>,
}

#[derive(Args)]
pub struct RunsArgs {
    #[arg(long, default_value = "results/bakeoff.db")]
    pub db: PathBuf,
    /// Print JSON instead of a table
    #[arg(long)]
    pub json: bool,
}

/// One `--fail-if-slower`: a metric (None: requests/s and CPU per request) and a fraction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GateSpec {
    /// The metric named, if any.
    pub metric: Option<bakeoff_model::records::metric::Metric>,
    /// 0.03 for 3%.
    pub fraction: f64,
}

/// `5%`, `cpu=3%`, `rps=3%`, `p99=10%` or `rss=10%`.
fn parse_gate(s: &str) -> Result<GateSpec, String> {
    use bakeoff_model::records::metric::Metric;
    let (metric, percent) = match s.split_once('=') {
        None => (None, s),
        Some((name, p)) => {
            let m = match name {
                "rps" => Metric::RequestsPerSec,
                "cpu" => Metric::CpuUsPerRequest,
                "p99" => Metric::P99Us,
                "rss" => Metric::PeakRssMib,
                other => return Err(format!("`{other}` is no gated metric: use rps, cpu, p99 or rss (e.g. cpu=3%)")),
            };
            (Some(m), p)
        }
    };
    Ok(GateSpec { metric, fraction: parse_percent(percent)? })
}
