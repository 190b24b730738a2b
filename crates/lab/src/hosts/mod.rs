//! Roles on hosts of their own: the agent every host runs (`bakeoff agent`, JSON lines over stdin and
//! stdout), the controller's persistent session to it (OpenSSH, or `ip netns exec` on this machine),
//! several load clients started at one instant with their HDR histograms added exactly, and a test
//! topology of network namespaces (with an `sshd` inside) on this one machine.

pub mod agent;
pub mod clients;
pub mod error;
pub mod merge;
pub mod netns;
pub mod protocol;
pub mod session;
pub mod sshd;

pub use error::HostError;
