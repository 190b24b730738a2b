//! The load plan a cell is measured with, built from the run's settings: the one place a load
//! setting reaches the load generator, for every schedule, the SLO search and latency under load.

use crate::contract::verify::{http_version, Wire};
use crate::error::LabError;
use crate::run::planning::cells::Cell;
use crate::run::planning::settings::LoadSettings;
use bakeoff_model::study::RampSetting;
use std::net::SocketAddr;
use std::time::Duration;

impl LoadSettings {
    /// A trial's plan for `cell` at `addr` after `warmup`: a soak's own length in one step, a
    /// ladder calibrated for this cell (`--ramp auto`), else these settings as they are.
    pub(crate) fn cell_plan(&self, cell: &Cell<'_>, addr: SocketAddr, warmup: Duration) -> Result<bakeoff_load::LoadPlan, LabError> {
        match (cell.soak, &cell.ramp) {
            (Some(soak), _) => LoadSettings { duration: soak.duration, ..self.clone() }.plan(cell, addr, warmup),
            (None, Some(r)) => LoadSettings { ramp: Some(RampSetting::Ladder(r.clone())), ..self.clone() }.plan(cell, addr, warmup),
            (None, None) => self.plan(cell, addr, warmup),
        }
    }

    /// These settings as a plan for `cell`'s load path (or its scenario file's deck) at `addr`.
    pub(crate) fn plan(&self, cell: &Cell<'_>, addr: SocketAddr, warmup: Duration) -> Result<bakeoff_load::LoadPlan, LabError> {
        let protocol = cell.variant.protocol;
        let url = format!("{}://{addr}{}", protocol.scheme(), cell.scenario.load_path());
        // HTTP/2 keeps one stream in flight per connection unless the run asks for more (`streams`):
        // the same concurrency as HTTP/1.1's connections, so a protocol's cells differ in the
        // protocol alone.
        let mut b = bakeoff_load::LoadPlan::builder(&url)
            .protocol(http_version(protocol))
            .connections(self.connections)
            .threads(self.client_threads)
            .duration(self.duration)
            .warmup(warmup)
            .timeout(self.timeout)
            .pin_cpus(self.client_cpus.clone());
        // Under load the certificate is not verified (as wrk and h2load), its signature still is.
        if let Some(tls) = (Wire { protocol, ca: None }).tls() {
            b = b.tls(bakeoff_load::TlsSettings { resumption: self.tls_resumption, ..tls });
        }
        if let Some(rate) = self.rate {
            b = b.rate(rate);
        }
        match &self.ramp {
            Some(RampSetting::Ladder(ramp)) => b = b.ramp(ramp.clone()),
            Some(RampSetting::Auto) => {
                return Err(LabError::Selection("`--ramp auto` is calibrated before any cell is measured; this is a bug".into()))
            }
            None => {}
        }
        if let Some(l) = &self.conn_ladder {
            b = b.conn_ladder(l.clone());
        }
        if let Some(k) = self.requests_per_conn {
            b = b.requests_per_conn(k);
        }
        if protocol.http2() {
            b = b.streams(self.streams);
        }
        if let Some(file) = self.scenario_file(cell.scenario) {
            b = b.deck(file.deck.clone());
        }
        b.build().map_err(|e| LabError::Input {
            what: "load settings".into(),
            problem: e.to_string(),
            hint: "check --connections, --duration and --rate".into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::run::{plan_run, Overrides, RunRequest};
    use bakeoff_model::protocol::WireProtocol;
    use std::path::Path;
    use std::time::Duration;

    /// `--streams 8` on the protocols study: its h2 and h2c cells load 8 streams per connection,
    /// its HTTP/1.1 cells (cleartext and TLS) one request per connection, as before.
    #[test]
    fn streams_apply_to_the_http2_cells_only() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let study = Some(root.join("studies/protocols.toml"));
        let overrides = Overrides { streams: Some(8), ..Default::default() };
        let plan = plan_run(RunRequest { root, study, overrides, ..Default::default() }).unwrap();
        let addr = "127.0.0.1:8080".parse().unwrap();
        let cells = plan.cells().unwrap();
        let mut seen = std::collections::BTreeSet::new();
        for cell in &cells {
            let load = plan.settings.plan(cell, addr, Duration::ZERO).unwrap();
            let want = if cell.variant.protocol.http2() { 8 } else { 1 };
            assert_eq!(load.streams, want, "{} {}", cell.stack.name, cell.variant.name);
            seen.insert(cell.variant.protocol);
        }
        assert!(seen.contains(&WireProtocol::H2) && seen.contains(&WireProtocol::H1), "{seen:?}");
    }
}
