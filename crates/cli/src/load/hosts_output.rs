//! What `bakeoff load --client` prints about the hosts beside the load's own report: the server's
//! tree as its host measured it, a "what ran" line per host (machine, noise, clock), and the path
//! from each client to the server; and the same as a `hosts` object added to the JSON report.

use std::fmt::Write as _;

use bakeoff_lab::machine::doctor::Governor;
use bakeoff_lab::remote::measured::{HostsReport, PathReport, ServerReport, CEILING_SEND, RTT_CONNECTS};

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
    if let Some(lost) = &h.server_lost {
        let _ = writeln!(out, "Server not measured: {lost}");
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
            "Path to {} before the load (RTT: median of {RTT_CONNECTS} TCP connects; ceiling: {:.0} s sent to the server host, as long back):",
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
    let ceiling = match (m.ceiling_bytes_per_s, m.ceiling_back_bytes_per_s) {
        (Some(there), Some(back)) => format!("ceiling {}/s there, {}/s back", fmt_bytes(there), fmt_bytes(back)),
        (Some(there), None) => format!("ceiling {}/s", fmt_bytes(there)),
        (None, _) => "ceiling not measured (needs --server-host)".into(),
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

    use bakeoff_lab::remote::measured::{HostReport, Role};
    use bakeoff_lab::remote::protocol::{MachineFacts, PathMeasure, ProcessFound, ServerMeasure};
    use bakeoff_lab::remote::session::ClockOffset;
    use bakeoff_model::records::noise::{CpuSetNoise, TrialNoise};
    use bakeoff_model::records::results::MachineInfo;

    fn sample() -> HostsReport {
        let noise = TrialNoise {
            wall_s: 2.0,
            client: CpuSetNoise { cpus: vec![0, 1], steal_percent: 0.5, other_percent: 3.25 },
            ..TrialNoise::default()
        };
        let facts = MachineFacts {
            machine: MachineInfo {
                hostname: "a".into(),
                cpu_model: "AMD EPYC".into(),
                cores: 2,
                kernel: "6.18".into(),
                ..MachineInfo::default()
            },
            governor: Some(Governor::Performance),
            cpuset: vec![0, 1],
        };
        let host = |host: &str, role| HostReport {
            host: host.into(),
            role,
            hostname: "a".into(),
            facts: Some(facts.clone()),
            clock: ClockOffset { offset_ns: 4_000, bound_ns: 31_000 },
            noise: Some(noise.clone()),
        };
        let process = ProcessFound { pid: 42, name: "python3".into(), processes: 1, cpus: vec![0, 1] };
        let measure = ServerMeasure {
            process,
            cpu_s: 1.5,
            wall_s: 2.0,
            peak_rss_bytes: 20 << 20,
            mean_rss_bytes: 19 << 20,
            samples: Vec::new(),
            noise: noise.clone(),
        };
        let path = PathMeasure {
            target: "10.0.0.3:8080".into(),
            connects: 20,
            rtt_median_us: 24.4,
            rtt_min_us: 20.0,
            rtt_max_us: 300.0,
            sent_bytes: Some(1_500_000_000),
            ceiling_bytes_per_s: Some(1.5e9),
            back_bytes: Some(1_200_000_000),
            ceiling_back_bytes_per_s: Some(1.2e9),
            problem: None,
        };
        HostsReport {
            server: Some(ServerReport { host: "netns:srv".into(), measure, requests: 20_000, cpu_us_per_request: 75.0, cpu_percent: 75.0 }),
            server_lost: None,
            hosts: vec![host("netns:a", Role::Client), host("netns:srv", Role::Server)],
            paths: vec![PathReport { from: "netns:a".into(), measure: path }],
        }
    }

    #[test]
    fn the_hosts_block_says_server_what_ran_and_path() {
        let text = hosts_block(&sample());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "Server on netns:srv (pid 42 python3, 1 process(es), CPUs 0-1):");
        assert_eq!(
            lines[1],
            "  CPU 1.500 s in 2.00 s (75% of a core), 75.0 us per request over 20000 requests; RSS peak 20.00MB, mean 19.00MB"
        );
        assert_eq!(lines[2], "What ran:");
        assert_eq!(
            lines[3],
            "  client netns:a (a): AMD EPYC, 2 cores, kernel 6.18, governor performance, CPUs 0-1; steal 0.5%, others 3.2% of a core; clock +0.004 ms ± 0.031 ms"
        );
        assert!(lines[4].starts_with("  server netns:srv (a)"), "{text}");
        assert!(lines[5].starts_with("Path to 10.0.0.3:8080 before the load (RTT: median of 20 TCP connects"), "{text}");
        assert_eq!(
            lines[6].split_whitespace().collect::<Vec<_>>().join(" "),
            "from netns:a RTT 24 us (min 20, max 300) ceiling 1.40GB/s there, 1.12GB/s back"
        );
    }

    #[test]
    fn the_json_report_gains_a_hosts_object_and_keeps_its_fields() {
        let json = with_hosts(r#"{"schema_version":3,"steps":[]}"#, &sample()).unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["schema_version"], 3);
        assert_eq!(v["hosts"]["server"]["cpu_us_per_request"], 75.0);
        assert_eq!(v["hosts"]["hosts"][1]["role"], "server");
        assert_eq!(v["hosts"]["hosts"][0]["facts"]["governor"], "performance");
        assert_eq!(v["hosts"]["hosts"][0]["clock"]["bound_ns"], 31_000);
        assert_eq!(v["hosts"]["paths"][0]["measure"]["ceiling_bytes_per_s"], 1.5e9);
    }

    #[test]
    fn cpu_lists_print_as_ranges() {
        assert_eq!(cpu_list(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
        assert_eq!(cpu_list(&[]), "-");
    }
}
