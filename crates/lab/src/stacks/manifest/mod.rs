//! `stack.toml`: the one manifest of a stack, as the lab uses it once validated (the stack, its
//! variants and what they need), and where it is read from. parse.rs checks the text, with messages
//! that name the file, the field and the fix; docs/stacks.md documents the format.

mod parse;

use crate::error::LabError;
use bakeoff_model::protocol::WireProtocol;
use bakeoff_model::records::profile::StackProfile;
use bakeoff_model::scenario::{Scenario, ServiceKind};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use parse::parse;

pub(crate) const MANIFEST_FILE: &str = "stack.toml";

/// Where the products live-data probe changes a row, for stacks that keep their own copy of the
/// table (PocketBase seeds its own database from the fixture).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProductsProbe {
    /// SQLite file, relative to the cell's RUN_DIR.
    pub(crate) sqlite: String,
    /// The column holding the contract's id (default `id`).
    #[serde(default = "default_key")]
    pub(crate) key: String,
}

fn default_key() -> String {
    "id".into()
}

/// What a stack is to the load: a server of the scenarios, a proxy in front of nginx, or no process at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StackKind {
    /// A server implementing the HTTP scenarios (the default).
    Http,
    /// A reverse proxy in front of the run's nginx (the proxy scenario alone).
    Proxy,
    /// No process of its own: the load goes straight to the upstream (the proxy study's baseline).
    Baseline,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Database {
    Sqlite,
    Postgres,
}

#[derive(Debug, Clone)]
pub(crate) struct Setup {
    pub(crate) commands: Vec<String>,
    pub(crate) inputs: Vec<String>,
    pub(crate) timeout: Duration,
    /// A shell command printing `name version` lines of what is installed (run after setup).
    pub(crate) versions: Option<String>,
}

/// One configuration of a stack (its database, environment, scenarios), measured as cells of its own.
#[derive(Debug, Clone)]
pub struct Variant {
    /// Its name, kebab-case (`default` when the manifest lists none).
    pub name: String,
    pub(crate) database: Option<Database>,
    /// Environment added to the server's.
    pub env: BTreeMap<String, String>,
    /// The scenarios this variant is measured for.
    pub scenarios: Vec<Scenario>,
    pub(crate) services: Vec<ServiceKind>,
    /// A deliberate reproduction of a bug (one line saying which): measured and shown to tell what
    /// the bug costs, never ranked or compared with peers.
    pub(crate) reproduces: Option<String>,
    /// How its requests travel (HTTP/1.1 in cleartext unless the manifest says otherwise): the
    /// load plan's scheme and version, and what the verifier proves was negotiated.
    pub protocol: WireProtocol,
}

/// A validated stack.
#[derive(Debug, Clone)]
pub struct Stack {
    /// `language/name`, the folder's path under stacks/.
    pub name: String,
    pub(crate) dir: PathBuf,
    pub(crate) language: String,
    /// Interpreter or compiler and its version.
    pub runtime: String,
    /// The web framework ("none" for a raw server).
    pub framework: String,
    /// The HTTP server.
    pub server: String,
    /// One line on what the stack is.
    pub description: String,
    /// The seed study the stack comes from.
    pub seed: Option<String>,
    /// HTTP server, proxy or baseline.
    pub kind: StackKind,
    /// The scenarios it implements.
    pub scenarios: Vec<Scenario>,
    pub(crate) services: Vec<ServiceKind>,
    pub(crate) toolchain: Vec<String>,
    pub(crate) apt: Vec<String>,
    pub(crate) setup: Option<Setup>,
    pub(crate) start_command: String,
    pub(crate) ready_timeout: Duration,
    /// A longer warm-up than the run's, for a JIT runtime.
    pub warmup: Option<Duration>,
    /// Its variants; the first is its default.
    pub variants: Vec<Variant>,
    pub(crate) products_probe: Option<ProductsProbe>,
    /// Required for http and proxy stacks; a baseline runs no code of its own.
    pub(crate) profile: Option<StackProfile>,
    /// A server already running that bakeoff neither starts nor stops (`bench --url`).
    pub(crate) unmanaged: Option<Unmanaged>,
}

/// A server bakeoff did not start: where it answers, and its process if the user named it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unmanaged {
    /// Its loopback address.
    pub addr: std::net::SocketAddr,
    /// The process whose tree's CPU and memory are sampled (`--pid`).
    pub pid: Option<u32>,
}

impl Stack {
    /// The variants measured for `scenario`: later variants that list it, else the first one.
    pub fn variants_for(&self, scenario: Scenario) -> Vec<&Variant> {
        let specific: Vec<&Variant> = self.variants[1..].iter().filter(|v| v.scenarios.contains(&scenario)).collect();
        let mut out = Vec::new();
        if self.variants[0].scenarios.contains(&scenario) {
            out.push(&self.variants[0]);
        }
        out.extend(specific);
        out
    }

    /// The variant named `name`.
    pub fn variant(&self, name: &str) -> Option<&Variant> {
        self.variants.iter().find(|v| v.name == name)
    }

    /// Services a cell of this stack needs for `scenario` in `variant`.
    pub(crate) fn services_for(&self, scenario: Scenario, variant: &Variant) -> Vec<ServiceKind> {
        let mut s: Vec<ServiceKind> = self.services.iter().chain(variant.services.iter()).copied().collect();
        s.extend(scenario.service());
        if scenario == Scenario::Products && variant.database == Some(Database::Postgres) {
            s.push(ServiceKind::Postgres);
        }
        s.sort();
        s.dedup();
        s
    }
}

/// Loads and validates `dir/stack.toml`; `name` is the stack's path under stacks/.
pub(crate) fn load(dir: &Path, name: &str) -> Result<Stack, LabError> {
    let file = dir.join(MANIFEST_FILE);
    let text = std::fs::read_to_string(&file)
        .map_err(|e| LabError::manifest(&file, format!("cannot read: {e}"), "create it as docs/stacks.md shows"))?;
    parse(&text, dir, name)
}
