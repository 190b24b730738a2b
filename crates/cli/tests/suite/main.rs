//! The cli crate's integration tests, one binary (one link) for all of them; each module is one
//! concern and says what it covers in its first line.

mod common;
mod hosts_lab;

mod architecture;
mod bench;
mod cli;
mod doctor;
mod hosts;
mod new_stack;
mod run_hosts;
mod scenario_database;
mod scenario_file;
mod scenario_login;
mod server_host;
mod signals;
mod study_files;
