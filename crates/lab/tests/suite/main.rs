//! The lab crate's integration tests, one binary (one link) for all of them; each module is one
//! concern and says what it covers in its first line.

mod common;

mod block_schedule;
mod builtin_files;
mod ceiling_real;
mod compare_real;
mod detect_cheating;
mod file_cost;
mod file_database;
mod memory_growth;
mod protocols;
mod proxy_placement_real;
mod readiness;
mod run_real_stack;
mod services_real;
mod shop_stacks;
mod slo_real;
mod studies;
mod under_load_real;
mod verify_faulty_stack;
mod workers_honoured;
