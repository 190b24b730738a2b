//! Where a proxy study's upstream (nginx) runs beside the proxy and the load generator. On a
//! two-CPU machine one of the three must share a CPU: with the proxy (`shared`, the default) or
//! with the load generator (`own-cpu`, the proxy alone on the server CPUs as the article had it).

use serde::{Deserialize, Serialize};
use std::fmt;

/// Where nginx runs in a proxy study; see the file's opening lines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProxyPlacement {
    /// The proxy and nginx on the server CPUs, the load generator alone on the client CPUs.
    #[default]
    Shared,
    /// The proxy alone on the server CPUs; nginx on the client CPUs beside the load generator.
    OwnCpu,
}

impl ProxyPlacement {
    /// Both placements.
    pub const ALL: [ProxyPlacement; 2] = [ProxyPlacement::Shared, ProxyPlacement::OwnCpu];

    /// As a study or flag writes it: `shared`, `own-cpu`.
    pub fn id(self) -> &'static str {
        match self {
            ProxyPlacement::Shared => "shared",
            ProxyPlacement::OwnCpu => "own-cpu",
        }
    }

    /// The sentence a report prints beside the proxy figures.
    pub fn sentence(self, server_cpus: &str, client_cpus: &str) -> String {
        match self {
            ProxyPlacement::Shared => format!(
                "placement `shared`: the proxy and nginx share server CPU(s) {server_cpus}; the load generator has CPU(s) {client_cpus} to itself"
            ),
            ProxyPlacement::OwnCpu => format!(
                "placement `own-cpu`: the proxy has server CPU(s) {server_cpus} to itself; nginx shares CPU(s) {client_cpus} with the load generator (and so does the baseline, nginx served directly)"
            ),
        }
    }

    /// Whether nginx runs on the client's CPUs.
    pub fn upstream_on_client(self) -> bool {
        self == ProxyPlacement::OwnCpu
    }
}

impl fmt::Display for ProxyPlacement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl std::str::FromStr for ProxyPlacement {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        ProxyPlacement::ALL
            .into_iter()
            .find(|p| p.id() == s)
            .ok_or_else(|| format!("unknown proxy placement {s:?}; use `shared` (proxy and nginx on the server CPUs) or `own-cpu` (the proxy alone, nginx beside the load generator)"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_parse_back_and_a_typo_names_the_choices() {
        for p in ProxyPlacement::ALL {
            assert_eq!(p.id().parse::<ProxyPlacement>().unwrap(), p);
        }
        let e = "own_cpu".parse::<ProxyPlacement>().unwrap_err();
        assert!(e.contains("`shared`") && e.contains("`own-cpu`"), "{e}");
    }

    #[test]
    fn a_study_file_spells_it_as_the_flag_does() {
        #[derive(Deserialize)]
        struct S {
            p: ProxyPlacement,
        }
        let s: S = toml::from_str("p = \"own-cpu\"").unwrap();
        assert_eq!(s.p, ProxyPlacement::OwnCpu);
        assert!(toml::from_str::<S>("p = \"own\"").is_err());
    }
}
