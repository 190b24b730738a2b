//! A run's plan before anything runs: its settings merged, its cells, its scenario files, how its
//! blocks spread over launches, how long it will take, and the load plan each cell gets.

pub mod cells;
pub(crate) mod estimate;
pub(crate) mod files;
pub(crate) mod launches;
pub(crate) mod load_plan;
pub(crate) mod plan;
pub(crate) mod settings;
