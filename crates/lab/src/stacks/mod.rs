//! Stacks as the lab knows them: their manifests (stack.toml), the catalogue found under stacks/,
//! and their cached setup.

pub mod catalog;
pub mod manifest;
pub mod setup;
