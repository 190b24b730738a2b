//! The schedules that order a run's measurements and own their pairing and stopping: trials in
//! rounds, paired blocks (each cell alone and all at once), the tally that decides what to measure
//! next, the noise probe and the calibration before the cells.

pub(crate) mod at_once;
pub(crate) mod block;
pub(crate) mod blocks;
pub(crate) mod calibrate;
pub mod noise_probe;
pub(crate) mod outcome;
pub(crate) mod rounds;
pub(crate) mod slice;
pub(crate) mod tally;
