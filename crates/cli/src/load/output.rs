//! What `bakeoff load` prints for a person: the wrk-like summary and the live progress line.

use std::fmt::Write as _;

use bakeoff_load::{ErrorCounts, KindReport, LatencyStats, LoadReport, ProgressSnapshot, StepReport};

pub(crate) fn fmt_us(us: f64) -> String {
    if us >= 1_000_000.0 {
        format!("{:.2}s", us / 1e6)
    } else if us >= 1000.0 {
        format!("{:.2}ms", us / 1e3)
    } else {
        format!("{us:.0}us")
    }
}

pub(crate) fn fmt_bytes(b: f64) -> String {
    const U: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = b;
    let mut i = 0;
    while v >= 1024.0 && i < U.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    format!("{v:.2}{}", U[i])
}

fn latency_block(out: &mut String, name: &str, l: &LatencyStats) {
    if l.count == 0 {
        let _ = writeln!(out, "  {name}: no samples");
        return;
    }
    let _ = writeln!(out, "  {name:<12} {:>10} {:>10} {:>10} {:>10}", "Min", "Mean", "Stdev", "Max");
    let _ = writeln!(
        out,
        "  {:<12} {:>10} {:>10} {:>10} {:>10}",
        "",
        fmt_us(l.min_us),
        fmt_us(l.mean_us),
        fmt_us(l.stddev_us),
        fmt_us(l.max_us)
    );
    let _ = writeln!(out, "  {name} distribution ({} samples)", l.count);
    for (p, v) in [
        ("50%", l.p50_us),
        ("75%", l.p75_us),
        ("90%", l.p90_us),
        ("95%", l.p95_us),
        ("99%", l.p99_us),
        ("99.9%", l.p999_us),
        ("99.99%", l.p9999_us),
    ] {
        let _ = writeln!(out, "    {p:>7}  {}", fmt_us(v));
    }
    let _ = writeln!(out, "    tm99 {}  tm99.9 {}", fmt_us(l.tm99_us), fmt_us(l.tm999_us));
}

fn errors_line(e: &ErrorCounts) -> String {
    let mut s = format!(
        "connect {}, read {}, write {}, timeout {}, malformed {}, unanswered {}, body mismatch {}",
        e.connect, e.read, e.write, e.timeout, e.malformed, e.unanswered, e.body_mismatch
    );
    if e.tls > 0 {
        let _ = write!(s, ", tls {}", e.tls);
    }
    if e.reset > 0 {
        let _ = write!(s, ", reset {}", e.reset);
    }
    if e.login > 0 {
        let _ = write!(s, ", login {}", e.login);
    }
    for (code, n) in &e.status {
        let _ = write!(s, ", status {code}: {n}");
    }
    s
}

fn step_block(out: &mut String, s: &StepReport, open: bool) {
    let rate = s.target_rate.map(|r| format!(", target {r:.1} req/s")).unwrap_or_default();
    let _ = writeln!(out, "Step {}: {} connections{rate}", s.label, s.connections);
    let name = if open { "Latency*" } else { "Latency" };
    latency_block(out, name, &s.latency);
    if let Some(st) = &s.service_time {
        latency_block(out, "Service", st);
        let _ = writeln!(out, "  * corrected for coordinated omission: measured from each request's intended send time");
    }
    let _ = writeln!(out, "  {} requests in {:.2}s, {} read", s.requests, s.duration_s, fmt_bytes(s.bytes as f64));
    if s.errors.total() > 0 {
        let _ = writeln!(out, "  Errors ({}): {}", s.errors.total(), errors_line(&s.errors));
    }
    if let Some(t) = &s.tls {
        tls_line(out, t);
    }
    if let Some(h) = &s.h2 {
        h2_line(out, h);
    }
    if let Some(l) = s.max_schedule_lag_ms {
        let _ = writeln!(out, "  Max schedule lag: {l:.2}ms");
    }
    let _ = writeln!(out, "Requests/sec: {:>12.2}", s.requests_per_sec);
    let _ = writeln!(out, "Transfer/sec: {:>12}", fmt_bytes(s.bytes_per_sec));
    if !s.kinds.is_empty() {
        kinds_table(out, &s.kinds);
    }
}

/// What TLS negotiated and what its handshakes cost, on one line.
fn tls_line(out: &mut String, t: &bakeoff_load::TlsReport) {
    let what = match (&t.version, &t.cipher) {
        (Some(v), Some(c)) => format!("TLS {v} {c}{}", t.alpn.as_ref().map(|a| format!(" (ALPN {a})")).unwrap_or_default()),
        _ => "TLS: no handshake completed".to_string(),
    };
    let time = t.handshake_latency.as_ref().map(|l| format!(", p50 {} p99 {}", fmt_us(l.p50_us), fmt_us(l.p99_us))).unwrap_or_default();
    let _ = writeln!(out, "  {what}: {} handshakes ({} resumed), {:.1}/s{time}", t.handshakes, t.resumed, t.handshakes_per_sec);
}

/// HTTP/2's streams and the server's SETTINGS, on one line.
fn h2_line(out: &mut String, h: &bakeoff_load::H2Report) {
    let streams = h
        .streams
        .map_or_else(|| "no connection settled".to_string(), |s| format!("{s} streams per connection (asked {})", h.streams_asked));
    let server = h.server_settings.map_or_else(String::new, |s| {
        let max = s.max_concurrent_streams.map_or("unlimited".to_string(), |m| m.to_string());
        format!("; server: max streams {max}, window {}, frame {}", s.initial_window_size, s.max_frame_size)
    });
    let _ = writeln!(out, "  HTTP/2: {streams}{server}; {} resets, {} GOAWAY", h.resets, h.goaways);
}

/// One line per kind of a deck's requests; errors of every kind together, detailed below the table
/// for the kinds that have any.
fn kinds_table(out: &mut String, kinds: &[KindReport]) {
    let w = kinds.iter().map(|k| k.name.chars().count()).max().unwrap_or(0).clamp(4, 40);
    let _ = writeln!(out, "  {:<w$} {:>10} {:>12} {:>10} {:>10} {:>10} {:>8}", "Kind", "Requests", "Req/s", "p50", "p99", "Max", "Errors");
    for k in kinds {
        let l = &k.latency;
        let (p50, p99, max) =
            if l.count == 0 { ("-".into(), "-".into(), "-".into()) } else { (fmt_us(l.p50_us), fmt_us(l.p99_us), fmt_us(l.max_us)) };
        let _ = writeln!(
            out,
            "  {:<w$} {:>10} {:>12.2} {p50:>10} {p99:>10} {max:>10} {:>8}",
            k.name,
            k.requests,
            k.requests_per_sec,
            k.errors.total()
        );
    }
    for k in kinds.iter().filter(|k| k.errors.total() > 0) {
        let _ = writeln!(out, "  Errors of {}: {}", k.name, errors_line(&k.errors));
    }
}

/// The human summary, wrk-style, warnings last so they are what one reads.
pub(crate) fn human_summary(r: &LoadReport) -> String {
    let mut out = String::new();
    let p = &r.plan;
    let what = match (&p.duration_s, &p.requests) {
        (_, Some(n)) => format!("{n} requests"),
        (Some(d), None) => format!("{d}s test"),
        _ => "test".into(),
    };
    let _ = writeln!(out, "Running {what} @ {}", p.urls.join(", "));
    let _ = writeln!(
        out,
        "  {} threads and {} connections, {} schedule{}{}",
        p.threads,
        p.connections,
        p.schedule,
        p.rate.map(|r| format!(" at {r} req/s")).unwrap_or_default(),
        if p.pipeline > 1 { format!(", pipeline {}", p.pipeline) } else { String::new() }
    );
    let open = p.schedule.is_open();
    for s in &r.steps {
        step_block(&mut out, s, open);
    }
    let c = &r.client;
    let _ = writeln!(
        out,
        "Client: {:.0}% CPU of one core over {} thread(s) (user {:.2}s, sys {:.2}s), max RSS {}",
        c.cpu_percent,
        c.threads,
        c.cpu_user_s,
        c.cpu_system_s,
        fmt_bytes(c.max_rss_bytes as f64)
    );
    if r.warnings.is_empty() {
        let _ = writeln!(out, "Warnings: none");
    } else {
        let _ = writeln!(out, "Warnings:");
        for w in &r.warnings {
            let _ = writeln!(out, "  ! {}\n    -> {}", w.message(), w.advice());
        }
    }
    out
}

/// One line per step of a deck with a login: logins sent and failed (they are not requests of the
/// deck, so the report's counts leave them out). Empty without a login.
pub(crate) fn logins_lines(steps: &[bakeoff_load::StepReport]) -> String {
    let mut out = String::new();
    for s in steps {
        if let Some(l) = s.logins {
            let _ = writeln!(out, "Logins (step {}): {} sent, {} failed", s.label, l.sent, l.failed);
        }
    }
    out
}

/// One live progress line (no newline), for a terminal.
pub(crate) fn progress_line(p: &ProgressSnapshot) -> String {
    let el = p.elapsed_s.max(0.0);
    let planned = p.planned_s.map(|t| format!("/{t:.0}s")).unwrap_or_default();
    let rps = if el > 0.0 { p.requests as f64 / el } else { 0.0 };
    let warm = if p.elapsed_s < 0.0 { " (warmup)" } else { "" };
    format!(
        "[{}/{} {}] {el:.0}s{planned}{warm}  {} req  {rps:.0} req/s  {} errors",
        p.step_index + 1,
        p.steps,
        p.step,
        p.requests,
        p.errors
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_table_lists_each_kind_and_its_errors() {
        let kind = |name: &str, requests: u64, p50_us: f64, not_found: u64| KindReport {
            name: name.into(),
            requests,
            requests_per_sec: requests as f64 / 2.0,
            latency: LatencyStats { p50_us, p99_us: 2.0 * p50_us, max_us: 3.0 * p50_us, count: requests, ..Default::default() },
            errors: ErrorCounts { status: [(404, not_found)].into_iter().filter(|s| s.1 > 0).collect(), ..Default::default() },
            histogram: String::new(),
        };
        let mut out = String::new();
        kinds_table(&mut out, &[kind("item", 600, 120.0, 0), kind("search", 300, 5200.0, 7), kind("idle", 0, 0.0, 0)]);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 5, "{out}");
        assert!(lines[0].contains("Kind") && lines[0].contains("p99") && lines[0].contains("Errors"));
        let cells = |l: &str| l.split_whitespace().map(String::from).collect::<Vec<_>>();
        assert_eq!(cells(lines[1]), ["item", "600", "300.00", "120us", "240us", "360us", "0"]);
        assert_eq!(cells(lines[2]), ["search", "300", "150.00", "5.20ms", "10.40ms", "15.60ms", "7"]);
        assert_eq!(cells(lines[3]), ["idle", "0", "0.00", "-", "-", "-", "0"]);
        assert!(lines[4].starts_with("  Errors of search:") && lines[4].contains("status 404: 7"), "{}", lines[4]);
    }
}
