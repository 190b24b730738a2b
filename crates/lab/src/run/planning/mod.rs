//! A run's plan before anything runs: its settings merged, its cells, its scenario files, how its
//! blocks spread over launches, and how long it will take.

pub mod cells;
pub(crate) mod estimate;
pub(crate) mod files;
pub(crate) mod launches;
pub(crate) mod plan;
pub(crate) mod settings;
