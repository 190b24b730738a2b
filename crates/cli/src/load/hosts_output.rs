//! What `bakeoff load --client` prints about the hosts beside the load's own report: the server's
//! tree as its host measured it, a "what ran" line per host (machine, noise, clock), and the path
//! from each client to the server; and the same as a `hosts` object added to the JSON report.

use std::fmt::Write as _;

use bakeoff_lab::host::doctor::Governor;
use bakeoff_lab::hosts::measured::{HostsReport, PathReport, ServerReport, CEILING_SEND, RTT_CONNECTS};

use super::output::fmt_bytes;

/// The JSON report with a `hosts` object (server, hosts, paths) added beside its own fields.
pub(crate) fn with_hosts(report_json: &str, hosts: &HostsReport) -> anyhow::Result<String> {
    let mut v: serde_json::Value = serde_json::from_str(report_json)?;
    if let Some(obj) = v.as_object_mut() {
        obj.insert("hosts".into(), serde_json::to_value(hosts)?);
    }
    Ok(serde_json::to_string_pretty(&v)?)
}

/// The server, what ran, and the paths, for a person.
pub(crate) fn hosts_block(h: &HostsReport) -> String {
    let mut out = String::new();
    if let Some(s) = &h.server {
        server_lines(&mut out, s);
    }
    let _ = writeln!(out, "What ran:");
    for r in &h.hosts {
        let (cpu, cores, kernel, governor, cpuset) = match &r.facts {
            Some(f) => (
                f.machine.cpu_model.as_str(),
                f.machine.cores.to_string(),
                f.machine.kernel.as_str(),
                governor_name(f.governor.as_ref()),
                cpu_list(&f.cpuset),
            ),
            None => ("unknown", "-".into(), "-", "-".into(), "-".into()),
        };
        let noise = match &r.noise {
            Some(n) => format!("steal {:.1}%, others {:.1}% of a core", n.steal_percent(), n.other_percent().max(0.0)),
            None => "noise not measured".into(),
        };
        let _ = writeln!(
            out,
            "  {:<6} {} ({}): {cpu}, {cores} cores, kernel {kernel}, governor {governor}, CPUs {cpuset}; {noise}; clock {:+.3} ms ± {:.3} ms",
            format!("{:?}", r.role).to_lowercase(),
            r.host,
            r.hostname,
            r.clock.offset_ns as f64 / 1e6,
            r.clock.bound_ns as f64 / 1e6,
        );
    }
    if let Some(first) = h.paths.first() {
        let _ = writeln!(
            out,
            "Path to {} before the load (RTT: median of {RTT_CONNECTS} TCP connects; ceiling: {:.0} s sent to the server host):",
            first.measure.target,
            CEILING_SEND.as_secs_f64()
        );
    }
    for p in &h.paths {
        path_line(&mut out, p);
    }
    out
}

fn server_lines(out: &mut String, s: &ServerReport) {
    let m = &s.measure;
    let _ = writeln!(
        out,
        "Server on {} (pid {} {}, {} process(es), CPUs {}):",
        s.host,
        m.process.pid,
        m.process.name,
        m.process.processes,
        cpu_list(&m.process.cpus)
    );
    let _ = writeln!(
        out,
        "  CPU {:.3} s in {:.2} s ({:.0}% of a core), {:.1} us per request over {} requests; RSS peak {}, mean {}",
        m.cpu_s,
        m.wall_s,
        s.cpu_percent,
        s.cpu_us_per_request,
        s.requests,
        fmt_bytes(m.peak_rss_bytes as f64),
        fmt_bytes(m.mean_rss_bytes as f64)
    );
}

fn path_line(out: &mut String, p: &PathReport) {
    let m = &p.measure;
    let rtt = if m.connects > 0 {
        format!("RTT {:.0} us (min {:.0}, max {:.0})", m.rtt_median_us, m.rtt_min_us, m.rtt_max_us)
    } else {
        "RTT not measured".into()
    };
    let ceiling = match m.ceiling_bytes_per_s {
        Some(b) => format!("ceiling {}/s", fmt_bytes(b)),
        None => "ceiling not measured (needs --server-host)".into(),
    };
    let problem = m.problem.as_ref().map(|p| format!("  ({p})")).unwrap_or_default();
    let _ = writeln!(out, "  from {:<28} {rtt}  {ceiling}{problem}", p.from);
}

fn governor_name(g: Option<&Governor>) -> String {
    match g {
        Some(Governor::Performance) => "performance".into(),
        Some(Governor::Other(n)) | Some(Governor::Mixed(n)) => n.clone(),
        None => "not exposed".into(),
    }
}

/// CPUs as ranges: `0-3,6`.
fn cpu_list(cpus: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if i == j { cpus[i].to_string() } else { format!("{}-{}", cpus[i], cpus[j]) });
        i = j + 1;
    }
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_print_as_ranges() {
        assert_eq!(cpu_list(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
        assert_eq!(cpu_list(&[]), "-");
    }
}
