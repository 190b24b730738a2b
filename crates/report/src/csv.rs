//! CSV: one row per cell-step, every metric as three columns (median, 95% CI low, high), raw numbers
//! in the metric's unit (ids end in _us, _mib, _percent). Wide rather than one row per metric so a
//! spreadsheet or pandas reads a cell as one record; the column set is fixed by `Metric::ALL`.

use crate::view::ReportView;
use bakeoff_model::summary::Metric;

pub fn render(view: &ReportView) -> String {
    let mut header: Vec<String> = ["run_id", "stack", "scenario", "variant", "workers", "step", "step_label", "target_rate", "trials"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for m in Metric::ALL {
        header.extend([m.id().to_string(), format!("{}_ci_low", m.id()), format!("{}_ci_high", m.id())]);
    }
    header.extend(["rss_slope_mib_per_min", "memory_growth", "trials_disagree", "warnings"].map(String::from));
    let mut out = line(&header);
    for c in &view.cells {
        let mem = view.memory_of(&c.cell);
        let mut row = vec![
            view.data.run.id.clone(),
            c.cell.stack.clone(),
            c.cell.scenario.clone(),
            c.cell.variant.clone(),
            c.cell.workers.to_string(),
            c.step.to_string(),
            c.step_label.clone(),
            c.target_rate.map(num).unwrap_or_default(),
            c.get(Metric::RequestsPerSec).trials.to_string(),
        ];
        for m in Metric::ALL {
            let e = c.get(m);
            row.extend([num(e.median), num(e.ci_low), num(e.ci_high)]);
        }
        row.push(mem.and_then(|m| m.fit).map(|f| num(f.slope)).unwrap_or_default());
        row.push(mem.is_some_and(|m| m.growing()).to_string());
        row.push(c.disagree.to_string());
        row.push(c.warnings.iter().map(|(m, _)| m.as_str()).collect::<Vec<_>>().join("; "));
        out.push_str(&line(&row));
    }
    // Store ceilings: one row each after the cells, stack `ceiling:<store>`, variant = the native
    // client, step_label "store ceiling, N conns"; only requests_per_sec (= queries/s, no interval),
    // mean_us and p99_us are filled.
    for c in &view.data.ceilings {
        let mut row = vec![
            view.data.run.id.clone(),
            format!("ceiling:{}", c.store),
            c.scenario.clone(),
            c.client.clone(),
            String::new(),
            "0".into(),
            format!("store ceiling, {} conns", c.connections),
            String::new(),
            "1".into(),
        ];
        for m in Metric::ALL {
            let v = match m {
                Metric::RequestsPerSec => c.queries_per_sec,
                Metric::MeanUs => c.mean_latency_us,
                Metric::P99Us => c.p99_latency_us.unwrap_or(f64::NAN),
                _ => f64::NAN,
            };
            row.extend([num(v), num(v), num(v)]);
        }
        row.extend([String::new(), "false".into(), "false".into(), String::new()]);
        out.push_str(&line(&row));
    }
    out
}

/// Shortest round-trip decimal; empty for NaN so spreadsheets see a blank, not text.
fn num(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        String::new()
    }
}

/// RFC 4180: quote fields holding a comma, quote or line break; double the quotes inside.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn line(cells: &[String]) -> String {
    let mut s = cells.iter().map(|c| field(c)).collect::<Vec<_>>().join(",");
    s.push_str("\r\n");
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn fields_are_quoted_when_needed() {
        assert_eq!(super::field("a,b"), "\"a,b\"");
        assert_eq!(super::field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(super::field("plain"), "plain");
    }
}
