//! The report crate's integration tests, one binary (one link) for all of them; each module is one
//! concern and says what it covers in its first line.

mod compare_resolution;
mod formats;
mod paired_and_ceiling;
mod proxy_study_real;
mod seed_study_real;
mod side_by_side;
mod unrankable;
mod warnings_merge;
