//! Study files: which stacks, scenarios and load a study uses, and the claims of the article it
//! reproduces, written as checkable statements that are judged against the measured summaries.

use crate::duration::parse_duration;
use crate::error::InputError;
use crate::scenario::Scenario;
use crate::summary::{CellSummary, Metric};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Duration;

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Study {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub stacks: Vec<String>,
    #[serde(default)]
    pub scenarios: Vec<Scenario>,
    #[serde(default)]
    pub variants: Vec<String>,
    #[serde(default)]
    pub workers: Vec<u32>,
    /// Worker counts for some stacks instead of `workers`, e.g. `"python/werkzeug-uwsgi" = [64]`.
    #[serde(default)]
    pub stack_workers: std::collections::BTreeMap<String, Vec<u32>>,
    pub trials: Option<u32>,
    pub duration: Option<String>,
    pub warmup: Option<String>,
    pub connections: Option<u32>,
    pub rate: Option<f64>,
    pub ramp: Option<RampSetting>,
    pub requests_per_conn: Option<u64>,
    #[serde(default)]
    pub max_throughput: bool,
    #[serde(default)]
    pub claims: Vec<Claim>,
}

/// A rate ramp as a study or `--ramp` gives it: a ladder, or `auto` (the proxy study), which the
/// lab turns into a ladder from 40% to 100% of the baseline stack's closed-model maximum, measured
/// first. Parsed once; stored as the same text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum RampSetting {
    Auto,
    Ladder(bakeoff_load::Ramp),
}

impl std::fmt::Display for RampSetting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RampSetting::Auto => f.write_str("auto"),
            RampSetting::Ladder(r) => r.fmt(f),
        }
    }
}

impl std::str::FromStr for RampSetting {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s.trim() == "auto" {
            return Ok(RampSetting::Auto);
        }
        bakeoff_load::Ramp::parse(s)
            .map(RampSetting::Ladder)
            .map_err(|_| format!("`{s}` is not a ramp; write START:STEP:STEP_DURATION:MAX[:HOLD] (e.g. 1000:1000:5s:10000) or auto"))
    }
}

impl From<RampSetting> for String {
    fn from(r: RampSetting) -> String {
        r.to_string()
    }
}

impl TryFrom<String> for RampSetting {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

/// "`faster` beats `slower` on `scenario` by `metric`" (requests/s unless said otherwise), by at
/// least `by_percent`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    pub statement: String,
    pub scenario: Scenario,
    pub faster: String,
    pub slower: String,
    #[serde(default)]
    pub metric: Option<Metric>,
    #[serde(default)]
    pub by_percent: f64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum ClaimVerdict {
    Held,
    /// Contradicted by non-overlapping intervals.
    Failed,
    /// The intervals overlap: this machine cannot tell.
    Inconclusive,
    /// A cell it needs was not measured.
    NotMeasured,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ClaimResult {
    pub claim: Claim,
    pub verdict: ClaimVerdict,
    pub detail: String,
}

impl Study {
    /// The study of a run from flags alone: the given stacks and nothing else (defaults and flags
    /// set the rest; no claims).
    pub fn adhoc(stacks: Vec<String>) -> Study {
        Study {
            name: "adhoc".into(),
            description: String::new(),
            stacks,
            scenarios: vec![],
            variants: vec![],
            workers: vec![],
            stack_workers: Default::default(),
            trials: None,
            duration: None,
            warmup: None,
            connections: None,
            rate: None,
            ramp: None,
            requests_per_conn: None,
            max_throughput: false,
            claims: vec![],
        }
    }

    pub fn load(path: &Path) -> Result<Study, InputError> {
        let err = |problem: String, hint: &str| InputError { what: path.display().to_string(), problem, hint: hint.into() };
        let text = std::fs::read_to_string(path)
            .map_err(|e| err(format!("cannot read: {e}"), "give the path of a study file, e.g. studies/quick.toml"))?;
        let study: Study = toml::from_str(&text).map_err(|e| err(e.to_string().trim().to_string(), "compare with studies/quick.toml"))?;
        for (field, v) in [("duration", &study.duration), ("warmup", &study.warmup)] {
            if let Some(v) = v {
                parse_duration(v).map_err(|e| err(format!("`{field}`: {e}"), "write e.g. \"10s\""))?;
            }
        }
        for (stack, counts) in &study.stack_workers {
            if !study.stacks.contains(stack) {
                return Err(err(
                    format!("`stack_workers` names `{stack}`, which the study does not run"),
                    "add it to `stacks` or remove the line",
                ));
            }
            if counts.is_empty() || counts.contains(&0) {
                return Err(err(format!("`stack_workers.\"{stack}\"` must list worker counts of 1 or more"), "write e.g. [64]"));
            }
        }
        for c in &study.claims {
            if !study.stacks.contains(&c.faster) || !study.stacks.contains(&c.slower) {
                return Err(err(
                    format!("claim `{}` names a stack the study does not run", c.statement),
                    "add the stack to `stacks` or fix the claim",
                ));
            }
        }
        Ok(study)
    }

    /// The worker counts of the study's cells: `workers` (1 when unset), with `stack_workers`
    /// replacing them for the stacks it names.
    pub fn worker_counts(&self) -> WorkerCounts {
        let default = if self.workers.is_empty() { vec![1] } else { self.workers.clone() };
        WorkerCounts { default, per_stack: self.stack_workers.clone() }
    }

    pub fn duration(&self) -> Option<Duration> {
        self.duration.as_deref().and_then(|d| parse_duration(d).ok())
    }
    pub fn warmup(&self) -> Option<Duration> {
        self.warmup.as_deref().and_then(|d| parse_duration(d).ok())
    }
}

/// The worker counts of a run: one list for every stack, or another for some stacks (a prefork
/// server that holds one keep-alive connection per process needs a process per connection, where a
/// threaded or evented one serves them all with one worker).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WorkerCounts {
    pub default: Vec<u32>,
    /// Stack name -> its own list, replacing `default` for that stack.
    pub per_stack: std::collections::BTreeMap<String, Vec<u32>>,
}

impl WorkerCounts {
    /// The same counts for every stack.
    pub fn same(counts: &[u32]) -> WorkerCounts {
        WorkerCounts { default: counts.to_vec(), per_stack: std::collections::BTreeMap::new() }
    }

    pub fn for_stack(&self, stack: &str) -> &[u32] {
        self.per_stack.get(stack).unwrap_or(&self.default)
    }
}

/// Judges each claim on the best-matching cells (lowest worker count), on the closed-model "max"
/// step where a cell has one (the proxy study's maximum throughput), else on its first step.
pub fn judge(claims: &[Claim], summaries: &[CellSummary]) -> Vec<ClaimResult> {
    claims.iter().map(|c| judge_one(c, summaries)).collect()
}

fn judge_one(claim: &Claim, summaries: &[CellSummary]) -> ClaimResult {
    let metric = claim.metric.unwrap_or(Metric::RequestsPerSec);
    let find = |stack: &str| {
        let cells = summaries.iter().filter(|s| s.cell.stack == stack && s.cell.scenario == claim.scenario);
        let max_step = cells.clone().filter(|s| s.step_label == "max").min_by_key(|s| s.cell.workers);
        max_step.or_else(|| cells.filter(|s| s.step == 0).min_by_key(|s| s.cell.workers))
    };
    let (Some(a), Some(b)) = (find(&claim.faster), find(&claim.slower)) else {
        return ClaimResult {
            claim: claim.clone(),
            verdict: ClaimVerdict::NotMeasured,
            detail: "a cell the claim needs was not measured".into(),
        };
    };
    if let Some(broken) = [a, b].into_iter().find(|c| !c.rankable()) {
        return ClaimResult {
            claim: claim.clone(),
            verdict: ClaimVerdict::Inconclusive,
            detail: format!("{} is not ranked ({}), so nothing is claimed about it", broken.cell.label(), broken.unrankable.join("; ")),
        };
    }
    let (ea, eb) = (a.get(metric), b.get(metric));
    let factor = 1.0 + claim.by_percent / 100.0;
    let ratio = if metric.higher_is_better() { ea.median / eb.median } else { eb.median / ea.median };
    let detail = format!("{} {:.1} vs {} {:.1} ({}): ratio {ratio:.2}", claim.faster, ea.median, claim.slower, eb.median, metric.id());
    // Intervals that do not overlap decide; overlapping ones leave the claim open.
    let (held, failed) = if metric.higher_is_better() {
        (ea.ci_low >= eb.ci_high * factor, ea.ci_high < eb.ci_low * factor)
    } else {
        (ea.ci_high * factor <= eb.ci_low, ea.ci_low * factor > eb.ci_high)
    };
    let (verdict, detail) = if held {
        (ClaimVerdict::Held, detail)
    } else if failed {
        (ClaimVerdict::Failed, detail)
    } else {
        (ClaimVerdict::Inconclusive, format!("{detail}; the 95% intervals overlap"))
    };
    ClaimResult { claim: claim.clone(), verdict, detail }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<Study, InputError> {
        let path = std::env::temp_dir().join(format!("bakeoff-study-test-{}-{}.toml", std::process::id(), text.len()));
        std::fs::write(&path, text).unwrap();
        let study = Study::load(&path);
        std::fs::remove_file(&path).ok();
        study
    }

    const HEAD: &str = "name = \"t\"\nstacks = [\"rust/actix\", \"python/werkzeug-uwsgi\"]\nworkers = [1]\n";

    #[test]
    fn stack_workers_replace_the_study_counts_for_that_stack() {
        let study = load(&format!("{HEAD}[stack_workers]\n\"python/werkzeug-uwsgi\" = [64]\n")).unwrap();
        let counts = study.worker_counts();
        assert_eq!(counts.for_stack("python/werkzeug-uwsgi"), [64]);
        assert_eq!(counts.for_stack("rust/actix"), [1]);
        let unset = load("name = \"u\"\nstacks = [\"rust/actix\"]\n").unwrap();
        assert_eq!(unset.worker_counts().for_stack("rust/actix"), [1], "one worker when the study sets none");
    }

    #[test]
    fn stack_workers_must_name_a_study_stack_and_positive_counts() {
        let unknown = load(&format!("{HEAD}[stack_workers]\n\"go/fasthttp\" = [4]\n")).unwrap_err().to_string();
        assert!(unknown.contains("`stack_workers` names `go/fasthttp`, which the study does not run"), "{unknown}");
        let zero = load(&format!("{HEAD}[stack_workers]\n\"rust/actix\" = [0]\n")).unwrap_err().to_string();
        assert!(zero.contains("worker counts of 1 or more"), "{zero}");
    }

    #[test]
    fn the_shipped_studies_load() {
        let studies = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../studies");
        for entry in std::fs::read_dir(&studies).unwrap() {
            let path = entry.unwrap().path();
            Study::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
    }
}
