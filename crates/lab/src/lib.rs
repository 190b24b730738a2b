//! bakeoff's lab: scenarios' contracts and fixtures, stack manifests and their setup, backing
//! services, host control (processes, CPU placement, sampling), and the measured lifecycle of every
//! cell. It drives the load generator in-process and hands its results (`bakeoff_model` types) to a
//! `ResultSink`; it knows nothing of how results are stored or shown.

#![warn(missing_docs)]

pub mod contract;
pub mod error;
mod install;
pub mod machine;
pub mod remote;
pub mod run;
pub mod services;
pub mod stacks;
