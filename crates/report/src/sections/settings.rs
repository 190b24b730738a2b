//! The run's settings as the text and Markdown reports print them: a short readable list (load
//! model, connections, duration, trials, schedule, CPUs, budget, precision) read from the stored
//! settings; the JSON report keeps every setting, the HTML report every one as rows.

use crate::view::ReportView;
use bakeoff_model::plan::goal::PrimaryMetric;
use bakeoff_model::plan::place::{PATH_FROM_THE_SERVERS as SERVERS, PATH_FROM_THIS_MACHINE as THIS_MACHINE};
use bakeoff_model::plan::schedule::Schedule;
use bakeoff_model::slo::Slo;
use serde::Deserialize;

/// The stored load settings the list reads; any field may be missing from a run stored before it
/// existed (or from a synthetic run), so each is optional.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Stored {
    duration: Option<f64>,
    warmup: Option<f64>,
    connections: Option<u32>,
    client_threads: Option<u32>,
    rate: Option<f64>,
    ramp: Option<String>,
    conn_ladder: Option<Vec<u32>>,
    requests_per_conn: Option<u64>,
    tls_resumption: Option<bool>,
    streams: Option<u32>,
    trials: Option<u32>,
    schedule: Option<Schedule>,
    launches: Option<u32>,
    server_cpus: Option<Vec<usize>>,
    client_cpus: Option<Vec<usize>>,
    rank_by: Option<PrimaryMetric>,
    precision: Option<f64>,
    budget: Option<f64>,
    roles: Option<bakeoff_model::plan::place::Roles>,
    slo: Option<Slo>,
    latency_under_load: Option<bakeoff_model::slo::UnderLoad>,
}

/// The settings as (key, value) rows, keys short enough to align with the provenance's.
pub(crate) fn readable(view: &ReportView) -> Vec<(&'static str, String)> {
    let all = &view.data.run.settings;
    let s: Stored = all.get("load").and_then(|l| serde_json::from_value(l.clone()).ok()).unwrap_or_default();
    // Runs stored before the settings were grouped under `load` kept some at the top level.
    let top = |k: &str| all.get(k).and_then(|v| v.as_f64());
    let duration = s.duration.or(top("duration_s"));
    let warmup = s.warmup.or(top("warmup_s"));
    let connections = s.connections.or(top("connections").map(|c| c as u32));
    let cpus = |list: &Option<Vec<usize>>, key: &str| match list {
        Some(l) => cpu_list(l),
        None => all.get(key).and_then(|v| v.as_str()).unwrap_or("?").to_string(),
    };
    let mut rows = vec![
        ("load", load_model(&s, connections)),
        ("duration", format!("{} per trial after {} of warm-up", secs(duration), secs(warmup))),
        ("trials", trials(&s)),
        ("schedule", schedule(&s)),
        ("CPUs", format!("server {}, client {}", cpus(&s.server_cpus, "server_cpus"), cpus(&s.client_cpus, "client_cpus"))),
        ("budget", s.budget.map_or("none".to_string(), secs_long)),
        ("precision", precision(&s)),
    ];
    if let Some(hosts) = s.roles.as_ref().filter(|r| !r.is_local()).map(|r| hosts(r, all)) {
        rows.push(("hosts", hosts));
    }
    if let Some(slo) = &s.slo {
        rows.push(("SLO", format!("{slo}: capacity searched after every trial")));
    }
    if let Some(u) = &s.latency_under_load {
        let shown: Vec<String> = u.fractions.iter().map(|x| format!("{}%", short(x * 100.0))).collect();
        let launches = match u.launches {
            None => "once a launch".to_string(),
            Some(1) => "in the first launch".to_string(),
            Some(n) => format!("once a launch in the first {n}"),
        };
        rows.push((
            "under load",
            format!("{} s open-model steps at {} of each cell's capacity, {launches}", short(u.step.as_secs_f64()), shown.join(", ")),
        ));
    }
    rows
}

/// Where the roles ran: each client host and the server host as they answered (name, cores,
/// kernel and clock offset with its bound), each client's path to the servers, and the places.
fn hosts(roles: &bakeoff_model::plan::place::Roles, all: &serde_json::Value) -> String {
    let answered = all.get("hosts").and_then(|h| h.as_array()).cloned().unwrap_or_default();
    let paths = all.get("paths").and_then(|p| p.as_array()).cloned().unwrap_or_default();
    let path_from = |from: &str| paths.iter().find(|p| p["from"].as_str() == Some(from)).map(|p| path(&p["measure"])).unwrap_or_default();
    // A client's path is keyed by its host, a services host's by where the servers are.
    let described_from = |place: &bakeoff_model::plan::place::Place, path: String| -> String {
        let text = place.to_string();
        let Some(h) = answered.iter().find(|h| h["place"].as_str() == Some(&text)) else { return text };
        let m = &h["hello"]["facts"]["machine"];
        let ms = |k: &str| h["clock"][k].as_f64().unwrap_or(0.0) / 1e6;
        format!(
            "{text} ({}, {} cores, kernel {}, clock {:+.3} ms ± {:.3} ms{path})",
            h["hello"]["hostname"].as_str().unwrap_or("?"),
            m["cores"].as_u64().unwrap_or(0),
            m["kernel"].as_str().unwrap_or("?"),
            ms("offset_ns"),
            ms("bound_ns")
        )
    };
    let described = |place: &bakeoff_model::plan::place::Place| described_from(place, path_from(&place.host_name()));
    let clients = match (roles.client.len(), path_from(THIS_MACHINE)) {
        (0, p) if p.is_empty() => "load from this machine".to_string(),
        (0, p) => format!("load from this machine ({})", p.trim_start_matches(", ")),
        (n, _) => format!(
            "load from {n} client host{} (histograms added): {}",
            if n == 1 { "" } else { "s" },
            roles.client.iter().map(described).collect::<Vec<_>>().join(", ")
        ),
    };
    let same_host = roles.services == roles.server && matches!(roles.services, bakeoff_model::plan::place::Place::Ssh { .. });
    let from_servers = Some(path_from(SERVERS)).filter(|p| !p.is_empty()).map(|p| p + " from the servers").unwrap_or_default();
    let services = if same_host { "the same host".to_string() } else { described_from(&roles.services, from_servers) };
    format!("{clients}; servers on {}; services on {services}", described(&roles.server))
}

/// A client host's path to the servers, as measured before the run: ", RTT 24 µs, ceiling
/// 1.52 GB/s there, 1.48 GB/s back" (back: the way responses go).
fn path(m: &serde_json::Value) -> String {
    let rtt = m["rtt_median_us"].as_f64().filter(|_| m["connects"].as_u64() > Some(0));
    let rate = |b: f64| if b >= 1e9 { format!("{:.2} GB/s", b / 1e9) } else { format!("{:.0} MB/s", b / 1e6) };
    let mut out = rtt.map(|r| format!(", RTT {} µs", short(r))).unwrap_or_default();
    match (m["ceiling_bytes_per_s"].as_f64(), m["ceiling_back_bytes_per_s"].as_f64()) {
        (Some(there), Some(back)) => out.push_str(&format!(", ceiling {} there, {} back", rate(there), rate(back))),
        (Some(there), None) => out.push_str(&format!(", ceiling {}", rate(there))),
        _ => {}
    }
    out
}

fn load_model(s: &Stored, connections: Option<u32>) -> String {
    let model = match (s.rate, &s.ramp, &s.conn_ladder) {
        (Some(r), _, _) => format!("open model at {} req/s", crate::numbers::grouped(r)),
        (None, Some(ramp), _) => format!("open model, rate ramp {ramp}"),
        (None, None, Some(ladder)) => {
            let l: Vec<String> = ladder.iter().map(u32::to_string).collect();
            format!("closed model, connection ladder {}", l.join(", "))
        }
        (None, None, None) => "closed model".to_string(),
    };
    let threads = s.client_threads.filter(|&t| t > 1).map(|t| format!(", {t} client threads")).unwrap_or_default();
    let reconnect = s.requests_per_conn.map(|n| format!(", reconnecting every {n} requests")).unwrap_or_default();
    let reconnect = match s.tls_resumption {
        Some(false) => format!("{reconnect}, every TLS handshake a full one (no resumption)"),
        _ => reconnect,
    };
    let reconnect = match s.streams {
        Some(n) if n > 1 => format!("{reconnect}, {n} HTTP/2 streams per connection"),
        _ => reconnect,
    };
    match connections {
        Some(c) if s.conn_ladder.is_none() => format!("{model}, {c} connections{threads}{reconnect}"),
        _ => format!("{model}{threads}{reconnect}"),
    }
}

fn trials(s: &Stored) -> String {
    match (s.trials, s.precision) {
        (Some(t), Some(_)) => format!("{t} at least, more for cells short of the precision"),
        (Some(t), None) => t.to_string(),
        (None, _) => "?".into(),
    }
}

fn schedule(s: &Stored) -> String {
    match (s.schedule, s.launches) {
        (Some(Schedule::Blocks), Some(l)) => {
            format!("blocks (every cell alone once per block, random order, and all at once once), {l} launches")
        }
        (Some(Schedule::Blocks), None) => "blocks (every cell alone once per block, random order, and all at once once)".into(),
        (Some(Schedule::AtOnce), Some(l)) => format!("at once (every cell loaded together per round, equal CPU shares), {l} launches"),
        (Some(Schedule::AtOnce), None) => "at once (every cell loaded together per round, equal CPU shares)".into(),
        (Some(Schedule::Trials), _) => "trials (a server started per trial)".into(),
        (None, _) => "not recorded".into(),
    }
}

fn precision(s: &Stored) -> String {
    let metric = s.rank_by.unwrap_or_default().describe();
    match s.precision {
        Some(p) => format!("±{}% on {metric}", short(p * 100.0)),
        None => format!("no target (fixed trials), ranked by {metric}"),
    }
}

/// "0-3" for a run of CPUs, "0,2,4" otherwise.
fn cpu_list(cpus: &[usize]) -> String {
    let contiguous = cpus.windows(2).all(|w| w[1] == w[0] + 1);
    match (cpus.first(), cpus.last()) {
        (Some(a), Some(b)) if contiguous && a != b => format!("{a}-{b}"),
        _ => cpus.iter().map(usize::to_string).collect::<Vec<_>>().join(","),
    }
}

fn secs(s: Option<f64>) -> String {
    s.map_or("?".to_string(), |s| format!("{} s", short(s)))
}

/// Three significant figures without trailing zeros: "3", "2.5", "0.25".
fn short(x: f64) -> String {
    let s = crate::numbers::sig3(x);
    if s.contains('.') && !s.contains('e') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A budget: minutes when it is some.
fn secs_long(s: f64) -> String {
    if s >= 120.0 {
        format!("{} min", short(s / 60.0))
    } else {
        format!("{} s", short(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_read_as_ranges_when_contiguous() {
        assert_eq!(cpu_list(&[0, 1, 2, 3]), "0-3");
        assert_eq!(cpu_list(&[0, 2]), "0,2");
        assert_eq!(cpu_list(&[1]), "1");
    }

    #[test]
    fn placed_roles_read_as_each_host_with_what_it_is_and_its_clock() {
        let mut data = crate::synthetic::run_data();
        let hello = |name: &str| serde_json::json!({"hostname": name, "facts": {"machine": {"cores": 16, "kernel": "6.1.0"}}});
        data.run.settings = serde_json::json!({
        "load": {"roles": {"client": ["ssh://me@10.0.0.2:22", "netns:c2"], "server": "netns:srv", "services": "local"}},
        "hosts": [
            {"role": "client", "place": "ssh://me@10.0.0.2:22", "hello": hello("load1"), "clock": {"offset_ns": 1_250_000, "bound_ns": 40_000}},
            {"role": "client", "place": "netns:c2", "hello": hello("vm"), "clock": {"offset_ns": -3_000, "bound_ns": 20_000}}
            ],
            "paths": [{"from": "me@10.0.0.2:22", "measure": {"connects": 20, "rtt_median_us": 24.3, "ceiling_bytes_per_s": 1.52e9,
                "ceiling_back_bytes_per_s": 1.48e9}}]});
        let rows: std::collections::HashMap<_, _> = readable(&ReportView::new(&data)).into_iter().collect();
        assert_eq!(
            rows["hosts"],
            "load from 2 client hosts (histograms added): ssh://me@10.0.0.2:22 (load1, 16 cores, kernel 6.1.0, clock +1.250 ms ± 0.040 ms, \
             RTT 24.3 µs, ceiling 1.52 GB/s there, 1.48 GB/s back), \
             netns:c2 (vm, 16 cores, kernel 6.1.0, clock -0.003 ms ± 0.020 ms); servers on netns:srv; services on local"
        );
        data.run.settings = serde_json::json!({
            "load": {"roles": {"client": [], "server": "ssh://me@10.0.0.9:22", "services": "netns:db"}},
            "hosts": [{"role": "server", "place": "ssh://me@10.0.0.9:22", "hello": hello("srv1"), "clock": {"offset_ns": 5_000, "bound_ns": 30_000}}],
            "paths": [{"from": "this machine", "measure": {"connects": 20, "rtt_median_us": 41.0, "ceiling_bytes_per_s": 9.1e8}}]});
        let rows: std::collections::HashMap<_, _> = readable(&ReportView::new(&data)).into_iter().collect();
        assert_eq!(
            rows["hosts"],
            "load from this machine (RTT 41 µs, ceiling 910 MB/s); servers on ssh://me@10.0.0.9:22 (srv1, 16 cores, kernel 6.1.0, \
             clock +0.005 ms ± 0.030 ms); services on netns:db"
        );
        data.run.settings = serde_json::json!({
            "load": {"roles": {"client": [], "server": "ssh://me@10.0.0.9:22", "services": "ssh://me@10.0.0.7:22"}},
            "hosts": [{"role": "server", "place": "ssh://me@10.0.0.9:22", "hello": hello("srv1"), "clock": {"offset_ns": 5_000, "bound_ns": 30_000}},
                      {"role": "services", "place": "ssh://me@10.0.0.7:22", "hello": hello("db1"), "clock": {"offset_ns": -2_000, "bound_ns": 10_000}}],
            "paths": [{"from": "the servers", "measure": {"connects": 20, "rtt_median_us": 52.0, "ceiling_bytes_per_s": 1.1e9}}]});
        let rows: std::collections::HashMap<_, _> = readable(&ReportView::new(&data)).into_iter().collect();
        assert!(
            rows["hosts"].ends_with(
                "; services on ssh://me@10.0.0.7:22 (db1, 16 cores, kernel 6.1.0, clock -0.002 ms ± 0.010 ms, RTT 52 µs, ceiling 1.10 GB/s \
                 from the servers)"
            ),
            "a services host of its own says what it is: {}",
            rows["hosts"]
        );
        data.run.settings["load"]["roles"]["services"] = "ssh://me@10.0.0.9:22".into();
        let rows: std::collections::HashMap<_, _> = readable(&ReportView::new(&data)).into_iter().collect();
        assert!(rows["hosts"].ends_with("; services on the same host"), "{}", rows["hosts"]);
        data.run.settings = serde_json::json!({"load": {"roles": {"server": "local", "services": "local"}}});
        assert!(!readable(&ReportView::new(&data)).iter().any(|(k, _)| *k == "hosts"), "nothing placed, no row");
    }

    #[test]
    fn the_list_reads_every_setting_and_spells_the_load_model() {
        let mut data = crate::synthetic::run_data();
        data.run.settings = serde_json::json!({"load": {"duration": 3.0, "warmup": 1.0, "connections": 64, "client_threads": 1,
            "trials": 6, "schedule": "blocks", "server_cpus": [0], "client_cpus": [1], "rank_by": "capacity",
            "precision": 0.05, "budget": 540.0, "rate": null}});
        let view = ReportView::new(&data);
        let rows: std::collections::HashMap<_, _> = readable(&view).into_iter().collect();
        assert_eq!(rows["load"], "closed model, 64 connections");
        assert_eq!(rows["duration"], "3 s per trial after 1 s of warm-up");
        assert_eq!(rows["CPUs"], "server 0, client 1");
        assert_eq!(rows["budget"], "9 min");
        assert_eq!(rows["precision"], "±5% on capacity (req/s)");
        assert!(rows["schedule"].starts_with("blocks"));
        assert!(!rows.contains_key("SLO") && !rows.contains_key("under load"));
        let u = bakeoff_model::slo::UnderLoad::from_percent(&[25.0, 100.0], std::time::Duration::from_secs(1), None).unwrap();
        data.run.settings["load"]["latency_under_load"] = serde_json::to_value(u).unwrap();
        let view = ReportView::new(&data);
        let rows: std::collections::HashMap<_, _> = readable(&view).into_iter().collect();
        assert_eq!(rows["under load"], "1 s open-model steps at 25%, 100% of each cell's capacity, once a launch");
        let first = bakeoff_model::slo::UnderLoad::from_percent(&[50.0], std::time::Duration::from_secs(2), Some(1)).unwrap();
        data.run.settings["load"]["latency_under_load"] = serde_json::to_value(first).unwrap();
        let rows: std::collections::HashMap<_, _> = readable(&ReportView::new(&data)).into_iter().collect();
        assert_eq!(rows["under load"], "2 s open-model steps at 50% of each cell's capacity, in the first launch");
    }
}
