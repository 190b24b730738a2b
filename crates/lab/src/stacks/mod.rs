//! Stacks as the lab knows them: their manifests (stack.toml), the catalogue found under stacks/,
//! their cached setup and the versions it found.

pub mod catalog;
pub mod manifest;
pub mod setup;
pub(crate) mod versions;
