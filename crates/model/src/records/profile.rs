//! What ran: a stack variant's server model, workers, database pool, libraries and the versions its
//! setup found installed, as a run records them (docs/stacks.md defines the manifest's `[profile]`).

use serde::{Deserialize, Serialize};
use std::fmt;

/// How a stack's server runs request handlers; fixes what `WORKERS` counts (docs/stacks.md).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum ServerModel {
    /// Forked processes, one request at a time each (uWSGI, gunicorn sync).
    Prefork,
    /// OS threads, one request at a time each.
    Threads,
    /// One event loop per process or thread (Node, uvicorn, Netty, HAProxy).
    EventLoop,
    /// A work-stealing or per-thread async runtime (tokio, actix).
    AsyncRuntime,
    /// Go's scheduler over GOMAXPROCS threads.
    Goroutines,
    /// An actor system's dispatchers (pekko).
    Actors,
}

impl ServerModel {
    /// Every model, in the order docs/stacks.md lists them.
    pub const ALL: [ServerModel; 6] = [
        ServerModel::Prefork,
        ServerModel::Threads,
        ServerModel::EventLoop,
        ServerModel::AsyncRuntime,
        ServerModel::Goroutines,
        ServerModel::Actors,
    ];

    /// As a manifest writes it: `prefork`, `event-loop`...
    pub fn id(self) -> &'static str {
        match self {
            ServerModel::Prefork => "prefork",
            ServerModel::Threads => "threads",
            ServerModel::EventLoop => "event-loop",
            ServerModel::AsyncRuntime => "async-runtime",
            ServerModel::Goroutines => "goroutines",
            ServerModel::Actors => "actors",
        }
    }

    /// The model named `id`, or an error listing the known ones.
    pub fn parse(id: &str) -> Result<ServerModel, String> {
        Self::ALL.into_iter().find(|m| m.id() == id).ok_or_else(|| {
            let known: Vec<&str> = Self::ALL.iter().map(|m| m.id()).collect();
            format!("unknown server model `{id}` (known: {})", known.join(", "))
        })
    }
}

impl fmt::Display for ServerModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// A stack's manifest `[profile]`: its server model and the libraries its default variant uses.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StackProfile {
    /// How its server runs request handlers.
    pub server_model: ServerModel,
    /// Library names as their ecosystems name them; empty where the stack does not use one.
    pub json: String,
    /// The MessagePack library.
    pub msgpack: String,
    /// The database library or ORM.
    pub database: String,
    /// How the stack sizes its database pool, e.g. "POOL_SIZE per process".
    pub pool: String,
}

/// One `name version` line of a stack's `setup.versions` output.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Component {
    /// What is installed, e.g. `python3` or `fastapi`.
    pub name: String,
    /// Its version as printed; empty when the line had none.
    pub version: String,
}

impl Component {
    /// Parses `name version` lines; a line without a version keeps the whole line as its name.
    pub fn parse_lines(text: &str) -> Vec<Component> {
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(|l| match l.rsplit_once(char::is_whitespace) {
                Some((name, version)) => Component { name: name.trim().into(), version: version.into() },
                None => Component { name: l.into(), version: String::new() },
            })
            .collect()
    }
}

/// What ran for one stack variant of a run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WhatRan {
    /// The stack, e.g. `python/django`.
    pub stack: String,
    /// The variant measured.
    pub variant: String,
    /// From the manifest: the runtime, framework and server as the stack describes them.
    pub runtime: String,
    /// The framework, from the manifest.
    pub framework: String,
    /// The server, from the manifest.
    pub server: String,
    /// None for a stack whose manifest has no `[profile]` (a baseline).
    pub profile: Option<StackProfile>,
    /// The WORKERS values the run measured this variant with.
    pub workers: Vec<u32>,
    /// POOL_SIZE the run passed.
    pub pool_size: u32,
    /// What `setup.versions` printed after the last setup (empty when the stack has none).
    pub components: Vec<Component>,
    /// How its requests travelled: HTTP/1.1 or HTTP/2, in cleartext or over TLS (h1 for runs
    /// recorded before protocols were kept).
    #[serde(default)]
    pub protocol: crate::protocol::WireProtocol,
    /// Over TLS, what the lab set: the version, the cipher suite and the certificate; None in
    /// cleartext.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<String>,
}

impl WhatRan {
    /// The components as one line: `go 1.26.8, github.com/valyala/fasthttp v1.74.0`.
    pub fn versions_line(&self) -> String {
        let parts: Vec<String> = self.components.iter().map(|c| format!("{} {}", c.name, c.version).trim().to_string()).collect();
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_models_round_trip_through_their_ids_and_serde() {
        for m in ServerModel::ALL {
            assert_eq!(ServerModel::parse(m.id()), Ok(m));
            assert_eq!(serde_json::to_string(&m).unwrap(), format!("\"{}\"", m.id()));
        }
        let err = ServerModel::parse("fibers").unwrap_err();
        assert!(err.contains("fibers") && err.contains("event-loop"), "{err}");
    }

    #[test]
    fn version_lines_split_at_the_last_blank() {
        let c = Component::parse_lines("go 1.26.8\n\ngithub.com/valyala/fasthttp v1.74.0\nHAProxy version 2.6\nalone\n");
        let pairs: Vec<(&str, &str)> = c.iter().map(|c| (c.name.as_str(), c.version.as_str())).collect();
        assert_eq!(pairs, [("go", "1.26.8"), ("github.com/valyala/fasthttp", "v1.74.0"), ("HAProxy version", "2.6"), ("alone", "")]);
    }
}
