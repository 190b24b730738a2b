//! One module per subcommand.

pub mod agent;
pub mod bench;
pub mod compare;
pub mod doctor;
pub mod fixtures;
pub mod history;
pub mod new;
pub mod report;
pub mod revisions;
pub mod run;
pub mod runs;
pub mod scenario;
pub mod setup;
pub mod stacks;
pub mod studies;
pub mod verify;
