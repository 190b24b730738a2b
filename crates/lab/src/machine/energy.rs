//! The machine's energy counters: RAPL's package domains under /sys/class/powercap, read before
//! and after a trial's measurement, for the joules a request costs. Most virtual machines expose
//! none; a trial's energy is then None and the report says so.

use std::path::Path;

/// Where Linux exposes RAPL: Intel's, and AMD's since Linux 5.8, both as `intel-rapl:N`.
const POWERCAP: &str = "/sys/class/powercap";

/// One package domain's counter: microjoules so far, and the value it wraps to zero at.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Counter {
    energy_uj: u64,
    range_uj: u64,
}

/// Every package domain's counter at one moment, by domain directory.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct EnergyReading(Vec<(String, Counter)>);

impl EnergyReading {
    /// The counters now; None where the machine exposes none (or they cannot be read: since Linux
    /// 5.10 only root may).
    pub(crate) fn now() -> Option<EnergyReading> {
        read(Path::new(POWERCAP))
    }

    /// Joules from `self` to `later`, over every package, a counter's wrap undone (one wrap at
    /// most: a package's range is hours at full power); None when the domains are not the same.
    pub(crate) fn joules_until(&self, later: &EnergyReading) -> Option<f64> {
        if self.0.len() != later.0.len() {
            return None;
        }
        let mut microjoules = 0u64;
        for ((name, before), (later_name, after)) in self.0.iter().zip(&later.0) {
            if name != later_name {
                return None;
            }
            microjoules += if after.energy_uj >= before.energy_uj {
                after.energy_uj - before.energy_uj
            } else {
                after.energy_uj + before.range_uj.saturating_sub(before.energy_uj)
            };
        }
        Some(microjoules as f64 / 1e6)
    }
}

/// The package domains under `root`: top-level zones (`intel-rapl:N`, not their `intel-rapl:N:M`
/// subzones, which the package already counts) whose `name` is `package-N`.
fn read(root: &Path) -> Option<EnergyReading> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(root).ok()?.flatten() {
        let zone = entry.file_name().to_string_lossy().into_owned();
        if !zone.starts_with("intel-rapl:") || zone.matches(':').count() != 1 {
            continue;
        }
        let dir = entry.path();
        if !std::fs::read_to_string(dir.join("name")).is_ok_and(|n| n.trim().starts_with("package")) {
            continue;
        }
        let number = |file: &str| std::fs::read_to_string(dir.join(file)).ok()?.trim().parse::<u64>().ok();
        if let (Some(energy_uj), Some(range_uj)) = (number("energy_uj"), number("max_energy_range_uj")) {
            found.push((zone, Counter { energy_uj, range_uj }));
        }
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    (!found.is_empty()).then_some(EnergyReading(found))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// A powercap tree with `zones` (directory, name, energy µJ), each wrapping at 1,000,000 µJ.
    fn powercap(tag: &str, zones: &[(&str, &str, u64)]) -> PathBuf {
        let root = std::env::temp_dir().join(format!("bakeoff-powercap-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for (zone, name, energy) in zones {
            let dir = root.join(zone);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("name"), format!("{name}\n")).unwrap();
            std::fs::write(dir.join("energy_uj"), format!("{energy}\n")).unwrap();
            std::fs::write(dir.join("max_energy_range_uj"), "1000000\n").unwrap();
        }
        root
    }

    #[test]
    fn packages_are_summed_their_subzones_and_other_domains_left_out_and_a_wrap_undone() {
        let before = powercap(
            "a",
            &[
                ("intel-rapl:0", "package-0", 100_000),
                ("intel-rapl:0:0", "core", 50_000),
                ("intel-rapl:1", "package-1", 990_000),
                ("intel-rapl:2", "psys", 7),
            ],
        );
        let after = powercap(
            "b",
            &[
                ("intel-rapl:0", "package-0", 600_000),
                ("intel-rapl:0:0", "core", 90_000),
                ("intel-rapl:1", "package-1", 40_000),
                ("intel-rapl:2", "psys", 9),
            ],
        );
        let (a, b) = (read(&before).unwrap(), read(&after).unwrap());
        assert_eq!(a.0.len(), 2, "two packages: {a:?}");
        // 0.5 J on package 0; package 1 wrapped: 10,000 + 40,000 µJ.
        assert_eq!(a.joules_until(&b), Some(0.55));
        let _ = (std::fs::remove_dir_all(before), std::fs::remove_dir_all(after));
    }

    #[test]
    fn a_machine_without_counters_reads_none() {
        let empty = powercap("none", &[]);
        std::fs::create_dir_all(&empty).unwrap();
        assert_eq!(read(&empty), None);
        assert_eq!(read(&empty.join("missing")), None);
        let one = powercap("one", &[("intel-rapl:0", "package-0", 5)]);
        let two = powercap("two", &[("intel-rapl:0", "package-0", 5), ("intel-rapl:1", "package-1", 5)]);
        assert_eq!(read(&one).unwrap().joules_until(&read(&two).unwrap()), None, "the domains changed");
        for root in [empty, one, two] {
            let _ = std::fs::remove_dir_all(root);
        }
    }
}
