//! The scenario contract as the lab enforces it: the fixtures every stack reads and the verification
//! that a stack answers each scenario as docs/scenarios.md says.

pub mod deck;
pub mod fixtures;
pub mod verify;
