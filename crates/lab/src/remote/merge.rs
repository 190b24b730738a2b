//! Several clients' results as one: histograms are added (never percentiles averaged), counts and
//! error kinds summed, per-second timelines added second by second, warnings kept.

use bakeoff_load::{
    decode_histogram, encode_histogram, latency_stats, ClientUsage, DecodeError, ErrorCounts, H2Report, Histogram, KindReport, LoadReport,
    RunOutput, StepDetail, StepReport, TimelinePoint, TlsReport,
};

use super::protocol::ClientResult;

/// A client's result with its histograms read back: the report and, per step, the histograms.
pub fn decode_result(r: &ClientResult) -> Result<RunOutput, DecodeError> {
    let mut details = Vec::new();
    for (step, h) in r.report.steps.iter().zip(&r.steps) {
        // Read here so that merging a deck's kinds cannot meet a histogram it cannot read.
        for kind in &step.kinds {
            decode_histogram(&kind.histogram)?;
        }
        details.push(StepDetail {
            label: step.label.clone(),
            start_offset_s: r.report.plan.warmup_s,
            latency: decode_histogram(&step.histogram)?,
            service: h.service.as_deref().map(decode_histogram).transpose()?,
            seconds: h.seconds.iter().map(|s| decode_histogram(s)).collect::<Result<_, _>>()?,
        });
    }
    Ok(RunOutput { report: r.report.clone(), details })
}

/// The clients' runs as one run. Every client ran the same steps from the same instant, so step i
/// and second s of each line up; `(connections, rate, requests)` are the whole load's and `labels`
/// its steps' names (a client's step is named by its share: `rate 500/s` of a whole `rate 1000/s`).
pub fn merge(clients: &[RunOutput], (connections, rate, requests): (u32, Option<f64>, Option<u64>), labels: &[String]) -> RunOutput {
    let first = &clients[0];
    let steps_n = clients.iter().map(|c| c.report.steps.len().min(c.details.len())).min().unwrap_or(0);
    let mut steps = Vec::new();
    let mut details = Vec::new();
    for i in 0..steps_n {
        let (mut report, mut detail) = merge_step(clients.iter().map(|c| (&c.report.steps[i], &c.details[i])).collect());
        if let Some(label) = labels.get(i) {
            report.label.clone_from(label);
            detail.label.clone_from(label);
        }
        steps.push(report);
        details.push(detail);
    }
    let mut plan = first.report.plan.clone();
    plan.connections = connections;
    plan.rate = rate;
    plan.requests = requests;
    plan.threads = clients.iter().map(|c| c.report.plan.threads).sum();
    plan.cancelled = clients.iter().any(|c| c.report.plan.cancelled);
    let mut warnings = Vec::new();
    for w in clients.iter().flat_map(|c| &c.report.warnings) {
        if !warnings.contains(w) {
            warnings.push(w.clone());
        }
    }
    let client = ClientUsage {
        cpu_user_s: clients.iter().map(|c| c.report.client.cpu_user_s).sum(),
        cpu_system_s: clients.iter().map(|c| c.report.client.cpu_system_s).sum(),
        cpu_percent: clients.iter().map(|c| c.report.client.cpu_percent).sum(),
        max_rss_bytes: clients.iter().map(|c| c.report.client.max_rss_bytes).max().unwrap_or(0),
        threads: plan.threads,
    };
    let report = LoadReport { schema_version: first.report.schema_version, plan, steps, warnings, client };
    RunOutput { report, details }
}

/// One step of every client as one: the sums, and the stats of the added histograms.
fn merge_step(parts: Vec<(&StepReport, &StepDetail)>) -> (StepReport, StepDetail) {
    let (s0, d0) = parts[0];
    let mut latency = d0.latency.clone();
    let mut service = d0.service.clone();
    let mut seconds: Vec<Histogram<u64>> = d0.seconds.clone();
    let mut errors = ErrorCounts::default();
    let mut timeline: Vec<TimelinePoint> = Vec::new();
    for (i, (s, d)) in parts.iter().enumerate() {
        if i > 0 {
            latency.add(&d.latency).expect("the clients' histograms share their bounds");
            if let (Some(a), Some(b)) = (&mut service, &d.service) {
                a.add(b).expect("the clients' histograms share their bounds");
            }
            for (k, h) in d.seconds.iter().enumerate() {
                match seconds.get_mut(k) {
                    Some(m) => m.add(h).expect("the clients' histograms share their bounds"),
                    None => seconds.push(h.clone()),
                }
            }
        }
        errors.merge(&s.errors);
        for p in &s.timeline {
            let k = p.second as usize;
            while timeline.len() <= k {
                timeline.push(TimelinePoint { second: timeline.len() as u32, ..TimelinePoint::default() });
            }
            timeline[k].requests += p.requests;
            timeline[k].errors += p.errors;
        }
    }
    for (p, h) in timeline.iter_mut().zip(&seconds) {
        if !h.is_empty() {
            p.p50_us = h.value_at_quantile(0.5) as f64;
            p.p99_us = h.value_at_quantile(0.99) as f64;
        }
    }
    let requests: u64 = parts.iter().map(|(s, _)| s.requests).sum();
    let bytes: u64 = parts.iter().map(|(s, _)| s.bytes).sum();
    // The clients ran side by side from one instant: the merged window is the longest of theirs.
    let duration_s = parts.iter().map(|(s, _)| s.duration_s).fold(0.0, f64::max).max(1e-9);
    let mut warnings = Vec::new();
    for w in parts.iter().flat_map(|(s, _)| &s.warnings) {
        if !warnings.contains(w) {
            warnings.push(w.clone());
        }
    }
    let report = StepReport {
        label: s0.label.clone(),
        connections: parts.iter().map(|(s, _)| s.connections).sum(),
        target_rate: parts.iter().map(|(s, _)| s.target_rate).sum(),
        duration_s,
        requests,
        bytes,
        requests_per_sec: requests as f64 / duration_s,
        bytes_per_sec: bytes as f64 / duration_s,
        latency: latency_stats(&latency),
        service_time: service.as_ref().map(latency_stats),
        errors,
        timeline,
        histogram: encode_histogram(&latency),
        max_schedule_lag_ms: parts.iter().filter_map(|(s, _)| s.max_schedule_lag_ms).reduce(f64::max),
        warnings,
        kinds: merge_kinds(parts.iter().map(|(s, _)| *s), duration_s),
        logins: parts.iter().filter_map(|(s, _)| s.logins).reduce(|mut a, b| {
            a.merge(&b);
            a
        }),
        tls: TlsReport::merged(parts.iter().filter_map(|(s, _)| s.tls.as_ref()), duration_s),
        h2: H2Report::merged(parts.iter().filter_map(|(s, _)| s.h2.as_ref())),
    };
    let detail = StepDetail { label: s0.label.clone(), start_offset_s: d0.start_offset_s, latency, service, seconds };
    (report, detail)
}

/// A deck's kinds over every client, by name in the first client's order: counts and errors summed,
/// histograms added.
fn merge_kinds<'a>(steps: impl Iterator<Item = &'a StepReport>, duration_s: f64) -> Vec<KindReport> {
    let mut merged: Vec<(KindReport, Histogram<u64>)> = Vec::new();
    for kind in steps.flat_map(|s| &s.kinds) {
        let h = decode_histogram(&kind.histogram).expect("decode_result read every kind's histogram");
        match merged.iter_mut().find(|(k, _)| k.name == kind.name) {
            Some((k, sum)) => {
                k.requests += kind.requests;
                k.errors.merge(&kind.errors);
                sum.add(&h).expect("the clients' histograms share their bounds");
            }
            None => merged.push((kind.clone(), h)),
        }
    }
    merged
        .into_iter()
        .map(|(k, h)| KindReport {
            requests_per_sec: k.requests as f64 / duration_s,
            latency: latency_stats(&h),
            histogram: encode_histogram(&h),
            ..k
        })
        .collect()
}
