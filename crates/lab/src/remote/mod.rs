//! Roles on hosts of their own: the agent every host runs (`bakeoff agent`, JSON lines over stdin and
//! stdout), the controller's persistent session to it (OpenSSH, or `ip netns exec` on this machine),
//! several load clients started at one instant with their HDR histograms added exactly, and, for
//! tests only (feature `test-support`), a topology of network namespaces with an `sshd` inside on
//! this one machine. A measured run adds
//! the server's host: its agent meters the server's tree, every host says what it is and how noisy
//! it was, and the path from each client to the server is measured before the load. A server host's
//! agent also keeps the project's files in a workspace of its own, sets stacks up there, and starts,
//! meters and stops their servers for the controller.

pub mod agent;
pub mod clients;
pub mod error;
pub mod measured;
pub mod merge;
#[cfg(any(test, feature = "test-support"))]
pub mod netns;
pub(crate) mod path;
pub mod protocol;
pub mod server_host;
pub mod servers;
pub mod session;
pub mod spec;
#[cfg(any(test, feature = "test-support"))]
pub mod sshd;
pub mod started;
mod watch;
pub mod workspace;

pub use error::HostError;
