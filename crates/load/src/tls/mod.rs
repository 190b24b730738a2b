//! TLS for the load generator: the settings a plan carries (`settings`), and the client each worker
//! thread builds from them with what its handshakes measured (`client`).

pub(crate) mod client;
pub(crate) mod settings;

pub use client::Negotiated;
pub(crate) use client::{HandshakeRecorder, TlsClient};
pub use settings::{TlsSettings, TlsVersion};
