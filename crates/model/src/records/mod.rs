//! What a run produces and the store keeps: the result types the lab hands to a sink (`results`),
//! a run read back whole (`run_data`), its status, the metrics and their names, findings and the
//! lab's warnings, a trial's timeline and noise, one block's joint slice, and what ran (`profile`).

pub mod finding;
pub mod joint;
pub mod lab_warning;
pub mod metric;
pub mod noise;
pub mod profile;
pub mod results;
pub mod run_data;
pub mod status;
pub mod timeline;
