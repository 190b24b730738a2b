//! What a run aims for and how it is laid out: the primary metric and precision goal (`goal`), the
//! order of its measurements (`schedule`), and where each role runs (`place`).

pub mod goal;
pub mod place;
pub mod schedule;
