//! The machine's noise over a run, as every format shows it: steal and other processes' CPU on
//! the server's and the client's CPUs (median and worst trial), the busiest other process, and the
//! A/A noise floor (one cell measured twice per round, its two arms compared like two runs).

use bakeoff_model::records::noise::{CpuSetNoise, OtherProcess};
use bakeoff_model::records::results::{CellKey, TrialRecord};
use bakeoff_model::statistics::robust::ratio_interval;
use bakeoff_model::statistics::summary::Metric;
use serde::Serialize;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SideNoise {
    pub cpus: Vec<usize>,
    pub steal_median_percent: f64,
    pub steal_max_percent: f64,
    pub other_median_percent: f64,
    pub other_max_percent: f64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Busiest {
    #[serde(flatten)]
    pub process: OtherProcess,
    pub cell: CellKey,
    pub trial: u32,
}

/// "The noise floor on this machine: ±x% on requests/s, ±y% on CPU µs/request".
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct NoiseFloor {
    pub cell: CellKey,
    /// Trials per arm (the smaller arm).
    pub trials: usize,
    /// Half-width of the 95% interval of the arms' ratio, as a fraction; None below four trials a
    /// side, where no 95% interval exists.
    pub requests_per_sec: Option<f64>,
    /// The same for CPU µs per request.
    pub cpu_us_per_request: Option<f64>,
    /// The A/A ratio on requests/s paired block by block (arms measured in the same block or
    /// round), with what it cost: the floor a paired comparison of two cells has on this machine.
    pub paired: Option<PairedFloor>,
}

/// The paired A/A comparison: the twin's requests/s over its cell's, per block.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PairedFloor {
    /// The ratio with its interval and the blocks and launches behind it.
    #[serde(flatten)]
    pub ratio: bakeoff_model::statistics::paired::PairedRatio,
    /// Minutes the two arms took, starts, warm-ups and checks included.
    pub minutes: f64,
    /// The figure of merit: half-width (%) × √minutes.
    pub merit: f64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct NoiseView {
    /// Trials that carry a noise record (runs stored before noise accounting have none).
    pub trials: usize,
    pub server: Option<SideNoise>,
    pub client: Option<SideNoise>,
    /// Client hosts on other machines, each as its agent measured it, by host.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub client_hosts: Vec<(String, SideNoise)>,
    pub busiest: Option<Busiest>,
    pub floor: Option<NoiseFloor>,
    /// Where a block-scheduled run's noise lives: slices, launches, pairs.
    pub components: Option<crate::sections::components::Components>,
    /// Cells whose slices the block schedule lengthened, and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lengthened: Vec<crate::sections::components::Lengthened>,
}

fn median(v: &mut [f64]) -> f64 {
    bakeoff_model::statistics::robust::median_interval(v).map_or(f64::NAN, |m| m.median)
}

fn side<'t>(trials: &[&'t TrialRecord], pick: impl Fn(&'t TrialRecord) -> Option<&'t CpuSetNoise>) -> Option<SideNoise> {
    let sets: Vec<_> = trials.iter().filter_map(|t| pick(t)).collect();
    let first = sets.first()?;
    let mut steal: Vec<f64> = sets.iter().map(|s| s.steal_percent).collect();
    let mut other: Vec<f64> = sets.iter().map(|s| s.other_percent).collect();
    Some(SideNoise {
        cpus: first.cpus.clone(),
        steal_max_percent: steal.iter().copied().fold(0.0, f64::max),
        other_max_percent: other.iter().copied().fold(0.0, f64::max),
        steal_median_percent: median(&mut steal),
        other_median_percent: median(&mut other),
    })
}

pub fn noise_view(trials: &[TrialRecord]) -> NoiseView {
    let with: Vec<&TrialRecord> = trials.iter().filter(|t| t.noise.is_some()).collect();
    let busiest = with
        .iter()
        .filter_map(|t| {
            t.noise.as_ref()?.busiest_other.as_ref().map(|p| Busiest { process: p.clone(), cell: t.cell.clone(), trial: t.trial })
        })
        .max_by(|a, b| a.process.cpu_percent.total_cmp(&b.process.cpu_percent));
    NoiseView {
        trials: with.len(),
        server: side(&with, |t| t.noise.as_ref().map(|n| &n.server)),
        client: side(&with, |t| t.noise.as_ref().map(|n| &n.client)),
        client_hosts: client_hosts(&with),
        busiest,
        floor: floor(trials),
        components: crate::sections::components::components(trials),
        lengthened: crate::sections::components::lengthened(trials),
    }
}

/// Each client host of its own over the trials that loaded from it.
fn client_hosts<'t>(trials: &[&'t TrialRecord]) -> Vec<(String, SideNoise)> {
    let mut hosts: Vec<&str> =
        trials.iter().flat_map(|t| t.noise.iter().flat_map(|n| n.client_hosts.iter().map(|h| h.host.as_str()))).collect();
    hosts.sort();
    hosts.dedup();
    let of = |t: &'t TrialRecord, host: &str| t.noise.as_ref()?.client_hosts.iter().find(|h| h.host == host).map(|h| &h.noise);
    hosts.into_iter().filter_map(|h| side(trials, |t| of(t, h)).map(|s| (h.to_string(), s))).collect()
}

/// The A/A floor: the twin cell's trials against its main arm's.
fn floor(trials: &[TrialRecord]) -> Option<NoiseFloor> {
    let twin = trials.iter().find(|t| t.cell.twin)?.cell.clone();
    let main = CellKey { twin: false, ..twin.clone() };
    let arm = |key: &CellKey, m: Metric| -> Vec<f64> {
        trials.iter().filter(|t| &t.cell == key && !t.load.steps.is_empty()).map(|t| m.of(t, t.load.steps.len() - 1)).collect()
    };
    let half = |m: Metric| -> Option<f64> {
        let (lo, hi) = ratio_interval(&arm(&main, m), &arm(&twin, m))?.bounds?;
        Some((hi - lo) / 2.0)
    };
    let n = arm(&main, Metric::RequestsPerSec).len().min(arm(&twin, Metric::RequestsPerSec).len());
    let last_step = trials.iter().find(|t| t.cell == main).map_or(0, |t| t.load.steps.len().saturating_sub(1));
    let pairs = bakeoff_model::statistics::pairing::pairs_between(trials, &twin, &main, Metric::RequestsPerSec, last_step);
    let paired = (pairs.len() >= 2).then(|| bakeoff_model::statistics::paired::paired_ratio(&pairs)).flatten().map(|ratio| {
        let minutes = bakeoff_model::statistics::paired::minutes_spent(trials, &[&main, &twin]);
        PairedFloor { ratio, minutes, merit: ratio.merit(minutes) }
    });
    Some(NoiseFloor {
        cell: main.clone(),
        trials: n,
        requests_per_sec: half(Metric::RequestsPerSec),
        cpu_us_per_request: half(Metric::CpuUsPerRequest),
        paired,
    })
}

impl NoiseFloor {
    /// The sentence every human-facing format prints.
    pub fn sentence(&self) -> String {
        let pct = |v: Option<f64>| v.map_or("– (needs 4 trials per arm)".to_string(), |v| format!("±{:.1}%", 100.0 * v));
        let unpaired = format!(
            "the noise floor on this machine: {} on requests/s, {} on CPU µs/request (A/A: {} measured twice, {} trials per arm)",
            pct(self.requests_per_sec),
            pct(self.cpu_us_per_request),
            self.cell.label(),
            self.trials
        );
        match &self.paired {
            Some(p) => format!("{unpaired}; paired block by block: {}", p.sentence()),
            None => unpaired,
        }
    }
}

impl PairedFloor {
    /// "±1.3% (the twin at 1.004, 0.991–1.017; 6 blocks in 3 launches, 1.6 min, P = 1.6)".
    pub fn sentence(&self) -> String {
        let r = &self.ratio;
        let coverage = if r.confidence < bakeoff_model::statistics::paired::PAIRED_CONFIDENCE {
            format!(" ({:.0}% coverage: a 95% interval needs 6 blocks)", 100.0 * r.confidence)
        } else {
            String::new()
        };
        format!(
            "±{:.1}%{coverage} (the twin at {:.3}, {:.3}–{:.3}; {} blocks in {} launch{}, {:.1} min, P = {:.1})",
            100.0 * r.relative_half_width(),
            r.ratio,
            r.low,
            r.high,
            r.blocks,
            r.launches,
            if r.launches == 1 { "" } else { "es" },
            self.minutes,
            self.merit
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_model::records::noise::HostNoise;

    #[test]
    fn a_client_host_of_its_own_gets_a_row_of_the_noise_table() {
        let mut data = crate::synthetic::run_data();
        let host = |other: f64| HostNoise {
            host: "root@10.0.0.2:22".into(),
            noise: CpuSetNoise { cpus: vec![0, 1, 2, 3], steal_percent: 0.5, other_percent: other },
        };
        for (i, t) in data.trials.iter_mut().enumerate() {
            if let Some(n) = t.noise.as_mut() {
                n.client_hosts = vec![host(if i == 0 { 30.0 } else { 2.0 })];
            }
        }
        let view = noise_view(&data.trials);
        let (name, side) = &view.client_hosts[0];
        assert_eq!(name, "root@10.0.0.2:22");
        assert_eq!((side.other_median_percent, side.other_max_percent, side.cpus.len()), (2.0, 30.0, 4));
        let table = crate::sections::tables::noise(&crate::view::ReportView::new(&data)).unwrap();
        let row = table.rows.iter().find(|r| r[1].text == "client host root@10.0.0.2:22").expect("the host's row");
        assert_eq!((row[0].text.as_str(), row[2].text.as_str(), row[3].text.as_str()), ("0,1,2,3", "2.0%", "30.0%"));
    }
}
