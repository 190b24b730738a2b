//! The statistics over a run's trials: distribution-free intervals for a handful of trials
//! (`robust`), paired ratios block by block (`paired`, `pairing`), the design that spreads blocks
//! over launches (`design`), the widest ratio a study can expect (`forecast`), the simulator that
//! checks their coverage (`coverage`), summaries of a cell's trials (`summary`), an F test of
//! spread (`spread`), memory growth (`growth`), and two runs compared (`comparison`).

pub mod comparison;
pub mod coverage;
pub mod design;
pub mod forecast;
pub mod growth;
pub mod paired;
pub mod pairing;
pub mod robust;
pub mod spread;
pub mod summary;
