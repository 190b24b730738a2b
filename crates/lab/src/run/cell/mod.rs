//! One cell's lifecycle: its services and server started, its checks, one trial measured with its
//! meters, the SLO search and latency under load after it, and its server wherever it runs.

pub mod bench;
pub(crate) mod certificate;
pub(crate) mod dirs;
pub(crate) mod file_db;
pub(crate) mod measure;
pub(crate) mod meters;
pub(crate) mod served;
pub(crate) mod services;
pub(crate) mod slo;
pub(crate) mod start;
pub(crate) mod under_load;
pub(crate) mod verify_cell;
