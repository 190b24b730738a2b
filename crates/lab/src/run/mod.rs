//! A run: its cells planned from a selection, and the lifecycle that verifies and measures them.

pub mod cells;
pub mod runner;
