//! bakeoff's lab: scenarios and their fixtures, stack manifests, backing services, verification,
//! and the measured lifecycle of every cell. It drives the load generator in-process and hands its
//! results to a `ResultSink`; it knows nothing of how results are stored or shown.

pub mod catalog;
pub mod ceiling;
pub mod cells;
pub mod cgroup;
pub mod duration;
pub mod error;
pub mod fixtures;
pub mod growth;
pub mod machine;
pub mod manifest;
pub mod process;
pub mod results;
pub mod runner;
pub mod sampler;
pub mod scenario;
pub mod services;
pub mod setup;
pub mod study;
pub mod summary;
pub mod time;
pub mod verify;

pub use time::now_rfc3339;
