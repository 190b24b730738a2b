//! Stacks as the lab knows them: their manifests (stack.toml), the catalogue found under stacks/,
//! their cached setup and the versions it found, ad-hoc stacks made from a start command, and new stack folders written from templates.

pub mod adhoc;
pub mod catalog;
pub mod manifest;
pub mod scaffold;
mod scaffold_like;
pub mod setup;
pub(crate) mod setup_outputs;
mod stack_folder;
pub(crate) mod versions;
