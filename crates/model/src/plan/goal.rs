//! What a run aims for beyond its cells: the primary metric it ranks by, the precision it keeps
//! adding rounds for (within a time budget), and the cell it measures against itself (A/A).

use crate::records::metric::Metric;
use serde::{Deserialize, Serialize};

/// The two headline readings of a cell; a study ranks by one and shows both.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PrimaryMetric {
    /// Requests per second at saturation (closed model): higher is better.
    #[default]
    Capacity,
    /// Server CPU microseconds per request, from the server tree's CPU time: lower is better.
    Efficiency,
}

impl PrimaryMetric {
    /// Both, in the order help texts list them.
    pub const ALL: [PrimaryMetric; 2] = [PrimaryMetric::Capacity, PrimaryMetric::Efficiency];

    /// The cell metric it reads.
    pub fn metric(self) -> Metric {
        match self {
            PrimaryMetric::Capacity => Metric::RequestsPerSec,
            PrimaryMetric::Efficiency => Metric::CpuUsPerRequest,
        }
    }

    /// As a study or flag writes it: `capacity`, `efficiency`.
    pub fn id(self) -> &'static str {
        match self {
            PrimaryMetric::Capacity => "capacity",
            PrimaryMetric::Efficiency => "efficiency",
        }
    }

    /// "capacity (requests/s)" for reports.
    pub fn describe(self) -> String {
        format!("{} ({})", self.id(), self.metric().heading())
    }
}

impl std::str::FromStr for PrimaryMetric {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        PrimaryMetric::ALL
            .into_iter()
            .find(|p| p.id() == s)
            .ok_or_else(|| format!("`{s}` is not a primary metric: use capacity or efficiency"))
    }
}

/// A percentage such as `5%` (or `5`) as a fraction, 0 < p < 100.
pub fn parse_percent(s: &str) -> Result<f64, String> {
    let v: f64 = s.trim().trim_end_matches('%').trim().parse().map_err(|_| format!("`{s}` is not a percentage; write e.g. 5%"))?;
    if !(v > 0.0 && v < 100.0) {
        return Err(format!("`{s}` must be above 0% and below 100%"));
    }
    Ok(v / 100.0)
}

/// The cell of an A/A measurement, written `STACK SCENARIO` or `STACK[VARIANT] SCENARIO`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AaCell {
    /// The stack, e.g. `rust/actix`.
    pub stack: String,
    /// Its variant, if named.
    pub variant: Option<String>,
    /// The scenario, e.g. `hello`.
    pub scenario: String,
}

impl std::str::FromStr for AaCell {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("`{s}` does not name a cell; write e.g. \"rust/actix hello\" or \"go/fasthttp[sqlite] products\"");
        let mut parts = s.split_whitespace();
        let (Some(stack), Some(scenario), None) = (parts.next(), parts.next(), parts.next()) else { return Err(bad()) };
        let (stack, variant) = match stack.split_once('[') {
            Some((name, rest)) => (name, Some(rest.strip_suffix(']').ok_or_else(bad)?.to_string())),
            None => (stack, None),
        };
        Ok(AaCell { stack: stack.into(), variant, scenario: scenario.into() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_primary_metrics_and_aa_cells_parse_or_say_what_to_write() {
        assert_eq!(parse_percent("5%").unwrap(), 0.05);
        assert_eq!(parse_percent(" 2.5 ").unwrap(), 0.025);
        assert!(parse_percent("0%").unwrap_err().contains("above 0%"));
        assert!(parse_percent("five").unwrap_err().contains("write e.g. 5%"));
        assert_eq!("efficiency".parse::<PrimaryMetric>().unwrap().metric(), Metric::CpuUsPerRequest);
        assert!("speed".parse::<PrimaryMetric>().unwrap_err().contains("capacity or efficiency"));
        let aa: AaCell = "go/fasthttp[sqlite] products".parse().unwrap();
        assert_eq!((aa.stack.as_str(), aa.variant.as_deref(), aa.scenario.as_str()), ("go/fasthttp", Some("sqlite"), "products"));
        assert!("rust/actix".parse::<AaCell>().unwrap_err().contains("write e.g."));
    }
}
