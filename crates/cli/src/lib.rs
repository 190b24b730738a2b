//! What more than one binary of this crate uses: the load command, shared by `bakeoff load` and the
//! lean standalone `bakeoff-load` (which links only the load generator, so the bench against wrk
//! measures the client and not the lab).

pub mod load;
