//! The load crate's integration tests, one binary (one link) for all of them; each module is one
//! concern and says what it covers in its first line.

mod common;

mod accuracy;
mod deck;
mod h2;
mod hangs;
mod integration;
mod login;
mod parser_fuzz;
mod tls;
