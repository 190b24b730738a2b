//! The scenario catalogue: ids, routes and the response types of the contracts in docs/scenarios.md.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// What a stack is asked to do per request: one contract each in docs/scenarios.md, or a scenario
/// file's workload. Written as its id (`hello`, `file:shop`) in studies, manifests, the store and
/// reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Scenario {
    /// `GET /`: a fixed 12-byte `Hello World!`.
    Hello,
    /// `GET /greeting/{name}`: a route matched by the framework's router.
    Greeting,
    /// `GET /msgpack`: decode 1,000 MessagePack records per request.
    Msgpack,
    /// `GET /json?n=K`: encode K records as JSON per request.
    Json,
    /// `GET /transfer`: a 134,671-byte JSON body, byte for byte.
    Transfer,
    /// `GET /loop?n=N`: a counted loop of N iterations.
    Loop,
    /// `GET /products`: 20 rows read from SQLite or PostgreSQL per request.
    Products,
    /// `GET /documents/{id}`: one document read from the document store per request.
    Document,
    /// A proxy stack relaying bytes to an upstream nginx.
    Proxy,
    /// A scenario file's workload (docs/scenarios.md, "Scenario files"): its deck is the load, its
    /// expectations the checks.
    File(FileScenario),
}

crate::serde_as_text!(Scenario);

/// A scenario file's name, interned so that [`Scenario`] stays `Copy` and its id a `&'static str`:
/// a process names a few files at most, so the names it keeps are bounded by what it was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FileScenario(u32);

/// The ids (`file:NAME`) of the files named so far, in the order first named.
static FILE_IDS: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());

impl FileScenario {
    /// The scenario of the file named `name` (the same value for the same name).
    pub fn named(name: &str) -> FileScenario {
        let id = format!("{FILE_PREFIX}{name}");
        let mut ids = FILE_IDS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = ids.iter().position(|known| *known == id) {
            return FileScenario(i as u32);
        }
        ids.push(Box::leak(id.into_boxed_str()));
        FileScenario(ids.len() as u32 - 1)
    }

    /// `file:NAME`.
    pub fn id(self) -> &'static str {
        FILE_IDS.lock().unwrap_or_else(|e| e.into_inner())[self.0 as usize]
    }

    /// The file's name.
    pub fn name(self) -> &'static str {
        &self.id()[FILE_PREFIX.len()..]
    }
}

/// What a scenario file's id starts with.
const FILE_PREFIX: &str = "file:";

/// Services a scenario needs besides the stack itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServiceKind {
    /// PostgreSQL, for `products` on the postgres variant.
    Postgres,
    /// The document store (MongoDB wire protocol), for `document`.
    Docstore,
    /// nginx, the upstream of `proxy`.
    Nginx,
}

impl ServiceKind {
    /// Every service.
    pub const ALL: [ServiceKind; 3] = [ServiceKind::Postgres, ServiceKind::Docstore, ServiceKind::Nginx];

    /// As a manifest and the store write it.
    pub fn id(self) -> &'static str {
        match self {
            ServiceKind::Postgres => "postgres",
            ServiceKind::Docstore => "docstore",
            ServiceKind::Nginx => "nginx",
        }
    }
}

impl FromStr for ServiceKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        ServiceKind::ALL.into_iter().find(|k| k.id() == s).ok_or_else(|| format!("unknown service `{s}`; known: postgres, docstore, nginx"))
    }
}

impl Scenario {
    /// Every scenario, in catalogue order.
    pub const ALL: [Scenario; 9] = [
        Scenario::Hello,
        Scenario::Greeting,
        Scenario::Msgpack,
        Scenario::Json,
        Scenario::Transfer,
        Scenario::Loop,
        Scenario::Products,
        Scenario::Document,
        Scenario::Proxy,
    ];

    /// As studies, manifests, the store and reports write it: `hello`, `products`...
    pub fn id(self) -> &'static str {
        match self {
            Scenario::Hello => "hello",
            Scenario::Greeting => "greeting",
            Scenario::Msgpack => "msgpack",
            Scenario::Json => "json",
            Scenario::Transfer => "transfer",
            Scenario::Loop => "loop",
            Scenario::Products => "products",
            Scenario::Document => "document",
            Scenario::Proxy => "proxy",
            Scenario::File(f) => f.id(),
        }
    }

    /// The path the load generator requests during measurement (default parameters).
    pub fn load_path(self) -> &'static str {
        match self {
            Scenario::Hello => "/",
            Scenario::Greeting => "/greeting/bakeoff",
            Scenario::Msgpack => "/msgpack",
            Scenario::Json => "/json?n=1000",
            Scenario::Transfer => "/transfer",
            Scenario::Loop => "/loop?n=1000000",
            Scenario::Products => "/products",
            Scenario::Document => "/documents/42",
            Scenario::Proxy => "/bytes/10240",
            // Its deck's paths are the load; this is only the plan's address.
            Scenario::File(_) => "/",
        }
    }

    /// The `Content-Type` the contract requires.
    pub fn content_type(self) -> &'static str {
        match self {
            Scenario::Transfer | Scenario::Products | Scenario::Document => "application/json",
            Scenario::Proxy => "application/octet-stream",
            // Each request kind of the file says its own.
            Scenario::File(_) => "",
            _ => "text/plain",
        }
    }

    /// The backing service this scenario reads from, if any (products' is chosen by the variant).
    pub fn service(self) -> Option<ServiceKind> {
        match self {
            Scenario::Document => Some(ServiceKind::Docstore),
            Scenario::Proxy => Some(ServiceKind::Nginx),
            _ => None,
        }
    }
}

impl fmt::Display for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl FromStr for Scenario {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if let Some(name) = s.strip_prefix(FILE_PREFIX).filter(|n| !n.is_empty()) {
            return Ok(Scenario::File(FileScenario::named(name)));
        }
        Scenario::ALL.into_iter().find(|k| k.id() == s).ok_or_else(|| {
            let known: Vec<_> = Scenario::ALL.iter().map(|s| s.id()).collect();
            format!("unknown scenario `{s}`; known: {}, or file:NAME for a scenario file", known.join(", "))
        })
    }
}
