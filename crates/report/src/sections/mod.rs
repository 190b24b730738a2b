//! The report's sections: each file derives one part of the view from the run (a scenario's
//! ranking, the precision goal's outcome, the noise, the SLO capacities, memory, the proxy study,
//! sweeps, soaks, the article beside this machine, two servers side by side, what a request costs) and `tables` builds the tables the formats share.

pub(crate) mod article;
pub(crate) mod ceiling;
pub(crate) mod components;
pub mod cost;
pub(crate) mod kinds;
pub(crate) mod memory;
pub(crate) mod noise;
pub mod overhead;
pub(crate) mod precision;
pub mod proxy;
pub mod scenario;
pub(crate) mod settings;
pub(crate) mod side_by_side;
pub(crate) mod slo;
pub(crate) mod soak;
pub(crate) mod summary;
pub(crate) mod sweep;
pub(crate) mod tables;
pub(crate) mod under_load;
