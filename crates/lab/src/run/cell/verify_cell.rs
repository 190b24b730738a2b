//! Checking a running stack: its contracts before it is measured, and its answers and costs again
//! after the load, on the same warm server, then its stop.

use crate::contract::verify::{self, LiveData, Target};
use crate::contract::verify::{ServerTree, TreeHere};
use crate::run::cell::bench::CellBench;
use crate::run::cell::served::{Served, SqliteOnHost, Tree, TreeOnHost};
use crate::run::planning::cells::Cell;
use crate::services::postgres::SqliteFile;
use crate::stacks::manifest::{Database, Stack, Variant};
use bakeoff_model::records::results::{CheckScope, LabWarning, VerifyReport};
use bakeoff_model::scenario::Scenario;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

impl CellBench<'_> {
    /// Starts one stack variant and checks every chosen scenario's contract. A start has one
    /// DATABASE_URL: each scenario file with a database of its own is checked on a start of its own.
    pub fn verify_variant(&mut self, stack: &Stack, variant: &Variant, scenarios: &[Scenario], workers: u32) -> VerifyReport {
        let (own, shared): (Vec<Scenario>, Vec<Scenario>) = scenarios.iter().partition(|&&s| self.file_dbs().file_of(&[s]).is_some());
        if own.is_empty() {
            return self.verify_start(stack, variant, scenarios, workers);
        }
        let mut starts: Vec<Vec<Scenario>> = own.into_iter().map(|s| vec![s]).collect();
        if !shared.is_empty() {
            starts.insert(0, shared);
        }
        let mut report = self.verify_start(stack, variant, &starts[0], workers);
        for s in &starts[1..] {
            let more = self.verify_start(stack, variant, s, workers);
            report.checks.extend(more.checks);
        }
        report
    }

    /// One start of the variant, checked for `scenarios`.
    fn verify_start(&mut self, stack: &Stack, variant: &Variant, scenarios: &[Scenario], workers: u32) -> VerifyReport {
        let failed = |reason: String| VerifyReport {
            stack: stack.name.clone(),
            variant: variant.name.clone(),
            checks: vec![bakeoff_model::records::results::Check {
                scenario: CheckScope::Stack,
                verdict: bakeoff_model::records::results::Verdict::Fail,
                what: "the stack starts and listens".into(),
                url: String::new(),
                reason,
            }],
        };
        if let Err(e) = self.ensure_services(stack, scenarios, variant) {
            return failed(e.to_string());
        }
        let label = self.dirs.new_cell(stack, variant);
        let ids: Vec<&str> = scenarios.iter().map(|s| s.id()).collect();
        let what = format!("verify {} [{}] ({}), WORKERS={workers}", stack.name, variant.name, ids.join(", "));
        let (server, addr) = match self.start_stack(stack, variant, workers, &label, scenarios) {
            Ok(s) => s,
            Err(e) => {
                self.note_cell(&label, &what);
                return failed(e.to_string());
            }
        };
        // An unmanaged server's cost is proved on its `--pid`, when given.
        let tree = server.as_ref().map(Served::tree).or(stack.unmanaged.and_then(|u| u.pid).map(Tree::Here));
        let mut report = self.with_target(stack, variant, &label, addr, scenarios, tree, verify::verify);
        let Some(mut server) = server else {
            self.note_cell(&label, &what);
            return report;
        };
        if let Some(status) = server.exited() {
            report.checks.push(bakeoff_model::records::results::Check {
                scenario: CheckScope::Stack,
                verdict: bakeoff_model::records::results::Verdict::Fail,
                what: "the server stays up during verification".into(),
                url: format!("{}://{addr}/", variant.protocol.scheme()),
                reason: format!("it exited with {status}; see {}", server.log()),
            });
        }
        for left in server.stop(Duration::from_secs(5)) {
            report.checks.push(bakeoff_model::records::results::Check {
                scenario: CheckScope::Stack,
                verdict: bakeoff_model::records::results::Verdict::Fail,
                what: "nothing the stack started outlives its stop".into(),
                url: format!("{}://{addr}/", variant.protocol.scheme()),
                reason: format!(
                    "{left} was still running after SIGTERM and SIGKILL to the server's process group (it left the group, e.g. \
                     with setsid); the lab killed it. Keep every process in the group and stop them all on SIGTERM"
                ),
            });
        }
        self.note_cell(&label, &what);
        report
    }

    /// Calls `f` with the verifier's view of a running stack: its address, scenarios, process and
    /// the live-data handles of its stores.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn with_target<R>(
        &self,
        stack: &Stack,
        variant: &Variant,
        label: &str,
        addr: SocketAddr,
        scenarios: &[Scenario],
        tree: Option<Tree>,
        f: impl FnOnce(&Target<'_>) -> R,
    ) -> R {
        // A server on a host of its own: its cell's files are the host's, not readable from here.
        let on_host =
            self.place.server_host().is_some() && stack.unmanaged.is_none() && stack.kind != crate::stacks::manifest::StackKind::Baseline;
        let (here, on_host_tree);
        let server: Option<&dyn ServerTree> = match (tree, self.place.server_host()) {
            (Some(Tree::Here(pid)), _) => {
                here = TreeHere(pid);
                Some(&here)
            }
            (Some(Tree::OnHost(pid)), Some(host)) => {
                on_host_tree = TreeOnHost { host, pid };
                Some(&on_host_tree)
            }
            _ => None,
        };
        let (file, key) = match &stack.products_probe {
            Some(p) => (Path::new(&p.sqlite), p.key.clone()),
            None => (Path::new("products.sqlite"), "id".to_string()),
        };
        let sqlite = SqliteFile { path: self.dirs.cell_dir(label).join(file), key: key.clone() };
        // On a server host the cell's file is there: the agent changes it.
        let sqlite_there = self.place.server_host().filter(|_| on_host).and_then(|host| {
            let folder = host.run_folder.borrow().clone()?;
            let path = Path::new(&folder).join("cells").join(label).join(file).display().to_string();
            Some(SqliteOnHost { host, path, key })
        });
        let products: Option<&dyn LiveData> = match (variant.database, &sqlite_there) {
            (Some(Database::Postgres), _) => self.services.postgres.as_ref().map(|p| p as &dyn LiveData),
            (_, Some(there)) => Some(there),
            _ if on_host => None,
            _ => Some(&sqlite),
        };
        let file_db = self.file_dbs().handle(stack, variant, label, scenarios);
        f(&Target {
            stack: &stack.name,
            variant: &variant.name,
            addr,
            wire: self.wire(stack, variant),
            scenarios,
            products,
            products_out_of_reach: (on_host && products.is_none()).then(|| {
                format!(
                    "the cell's SQLite file is on the server host {}, whose run folder was not made",
                    self.place.server_host().map(|h| h.host()).unwrap_or_default()
                )
            }),
            documents: self.services.docstore.as_ref().map(|d| d as &dyn LiveData),
            upstream: self.services.nginx.as_ref().map(|n| n.addr),
            server,
            client_cpus: &self.settings.client_cpus,
            warmup: stack.warmup.unwrap_or_default(),
            workloads: self.settings.scenario_files.iter().map(|f| &*f.workload).collect(),
            file_db: file_db.as_deref(),
            cancel: self.cancel,
        })
    }

    /// After the measurement, on the warm server (if it still runs): the live-data probes again (a
    /// cache that starts late is stale now), after the cell's first trial the CPU-cost pairs again
    /// (work that stops after N requests costs nothing now; once per cell bounds what it costs),
    /// then the stop, which names any process left behind.
    pub(crate) fn after_measuring(
        &self,
        cell: &Cell<'_>,
        trial: u32,
        label: &str,
        addr: SocketAddr,
        server: Option<&mut Served>,
        died: bool,
    ) -> (Vec<LabWarning>, Vec<bakeoff_model::records::results::Check>) {
        let probes = if died {
            Vec::new()
        } else {
            self.with_target(cell.stack, cell.variant, label, addr, &[cell.scenario], None, verify::probe_again)
        };
        let mut warnings: Vec<LabWarning> = probes
            .into_iter()
            .filter(|c| c.verdict == bakeoff_model::records::results::Verdict::Fail)
            .map(|c| LabWarning::StaleAfterLoad { scenario: cell.scenario, reason: c.reason })
            .collect();
        let mut again = Vec::new();
        if trial == 1 && !died {
            let tree = server.as_deref().map(Served::tree);
            again = self.with_target(cell.stack, cell.variant, label, addr, &[cell.scenario], tree, verify::cost_again);
            // A warning (the machine could not measure, or the rounds disagree) passes, as in
            // verification: only a failure says the work stopped.
            warnings.extend(
                again
                    .iter()
                    .filter(|c| c.verdict == bakeoff_model::records::results::Verdict::Fail)
                    .map(|c| LabWarning::CostAfterLoad { scenario: cell.scenario, reason: c.reason.clone() }),
            );
        }
        if let Some(s) = server {
            let left = s.stop(Duration::from_secs(5));
            if !left.is_empty() {
                warnings.push(LabWarning::ProcessesLeftBehind { processes: left });
            }
        }
        (warnings, again)
    }
}
