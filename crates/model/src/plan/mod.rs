//! What a run aims for and how it is laid out: the primary metric and precision goal (`goal`), the
//! order of its measurements (`schedule`), where each role runs (`place`), and what a core costs
//! (`price`).

pub mod goal;
pub mod place;
pub mod price;
pub mod schedule;
