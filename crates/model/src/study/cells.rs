//! How a study names a measured cell: a stack, optionally its variant, worker count ("all" = one per
//! server CPU), scenario and load step; and how such a reference finds its summary among a run's.

use crate::records::results::CellKey;
use crate::scenario::Scenario;
use crate::statistics::summary::CellSummary;
use serde::{Deserialize, Serialize};

/// A worker count as a study writes it: a number, or "all" (one worker per server CPU), so a study of
/// an article's "all cores" scales to the machine that runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WorkerCount {
    /// This many workers.
    Count(u32),
    /// One worker per server CPU.
    AllServerCpus,
}

impl WorkerCount {
    /// The count on a machine whose server has `server_cpus` CPUs.
    pub fn resolve(self, server_cpus: u32) -> u32 {
        match self {
            WorkerCount::Count(n) => n,
            WorkerCount::AllServerCpus => server_cpus.max(1),
        }
    }
}

impl std::fmt::Display for WorkerCount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WorkerCount::Count(n) => write!(f, "{n}"),
            WorkerCount::AllServerCpus => f.write_str("all"),
        }
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum WorkerCountForm {
    Count(u32),
    Word(String),
}

impl<'de> Deserialize<'de> for WorkerCount {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match WorkerCountForm::deserialize(d)? {
            WorkerCountForm::Count(0) => Err(serde::de::Error::custom("a worker count is 1 or more")),
            WorkerCountForm::Count(n) => Ok(WorkerCount::Count(n)),
            WorkerCountForm::Word(w) if w == "all" => Ok(WorkerCount::AllServerCpus),
            WorkerCountForm::Word(w) => Err(serde::de::Error::custom(format!("worker count `{w}`: write a number or \"all\""))),
        }
    }
}

impl Serialize for WorkerCount {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            WorkerCount::Count(n) => s.serialize_u32(*n),
            WorkerCount::AllServerCpus => s.serialize_str("all"),
        }
    }
}

/// A load step: its index in the cell's schedule (0 = the first step of a ramp or ladder) or its label
/// ("max", "256 connections").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum StepRef {
    /// The step at this index, from 0.
    Index(usize),
    /// The step with this label.
    Label(String),
}

impl std::fmt::Display for StepRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StepRef::Index(i) => write!(f, "step {i}"),
            StepRef::Label(l) => f.write_str(l),
        }
    }
}

/// A cell a claim or an article figure refers to. Unset parts take the claim's (scenario) or the
/// defaults: the stack's first measured and ranked variant (by name), its lowest worker count, the closed-model "max" step
/// where there is one, else the first step.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct CellRef {
    /// The stack, e.g. `go/fasthttp`.
    pub stack: String,
    /// Its variant.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// Its worker count.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workers: Option<WorkerCount>,
    /// The scenario.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scenario: Option<Scenario>,
    /// The load step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<StepRef>,
}

/// `"go/fasthttp"` or `{ stack = "go/pocketbase", variant = "cgo", workers = "all" }`.
#[derive(Deserialize)]
#[serde(untagged)]
enum CellRefForm {
    Stack(String),
    Full(CellRefFields),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CellRefFields {
    stack: String,
    #[serde(default)]
    variant: Option<String>,
    #[serde(default)]
    workers: Option<WorkerCount>,
    #[serde(default)]
    scenario: Option<Scenario>,
    #[serde(default)]
    step: Option<StepRef>,
}

impl<'de> Deserialize<'de> for CellRef {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match CellRefForm::deserialize(d)? {
            CellRefForm::Stack(stack) => CellRef { stack, ..CellRef::default() },
            CellRefForm::Full(f) => CellRef { stack: f.stack, variant: f.variant, workers: f.workers, scenario: f.scenario, step: f.step },
        })
    }
}

impl CellRef {
    /// This reference with `scenario` where it names none.
    pub fn with_scenario(&self, scenario: Option<Scenario>) -> CellRef {
        CellRef { scenario: self.scenario.or(scenario), ..self.clone() }
    }

    /// `go/pocketbase[cgo] w4 products @max`.
    pub fn describe(&self) -> String {
        let mut s = self.stack.clone();
        if let Some(v) = &self.variant {
            s += &format!("[{v}]");
        }
        if let Some(w) = self.workers {
            s += &format!(" w={w}");
        }
        if let Some(sc) = &self.scenario {
            s += &format!(" {sc}");
        }
        if let Some(st) = &self.step {
            s += &format!(" @{st}");
        }
        s
    }

    /// Whether a cell is one this reference may name (any step), `server_cpus` resolving "all".
    pub fn matches_key(&self, key: &CellKey, server_cpus: u32) -> bool {
        key.stack == self.stack
            && self.scenario.is_some_and(|s| key.scenario == s)
            && self.variant.as_ref().is_none_or(|v| &key.variant == v)
            && self.workers.is_none_or(|w| key.workers == w.resolve(server_cpus))
    }

    /// The summary this reference names among a run's, `server_cpus` resolving "all".
    pub fn find<'a>(&self, summaries: &'a [CellSummary], server_cpus: u32) -> Option<&'a CellSummary> {
        let cells: Vec<&CellSummary> = summaries.iter().filter(|s| self.matches_key(&s.cell, server_cpus)).collect();
        // Unnamed, the variant is the first ranked one (a deliberate reproduction of a bug is never
        // a stack's stand-in), else the first.
        let default = cells.iter().find(|c| c.rankable()).or(cells.first());
        let variant = self.variant.clone().or_else(|| default.map(|c| c.cell.variant.clone()))?;
        let workers = cells.iter().filter(|c| c.cell.variant == variant).map(|c| c.cell.workers).min()?;
        let mine = cells.into_iter().filter(|c| c.cell.variant == variant && c.cell.workers == workers);
        let mine: Vec<&CellSummary> = mine.collect();
        match &self.step {
            Some(StepRef::Index(i)) => mine.into_iter().find(|c| c.step == *i),
            Some(StepRef::Label(l)) => mine.into_iter().find(|c| &c.step_label == l),
            None => mine.iter().find(|c| c.step_label == "max").or_else(|| mine.iter().find(|c| c.step == 0)).copied(),
        }
    }
}
