//! Stacks as the lab knows them: their manifests (stack.toml), the catalogue found under stacks/,
//! their cached setup and the versions it found, and ad-hoc stacks made from a start command.

pub mod adhoc;
pub mod catalog;
pub mod manifest;
pub mod setup;
pub(crate) mod versions;
