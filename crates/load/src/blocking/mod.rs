//! A blocking connection for the lab's checks (verification, a server's readiness), never on a
//! load path: TCP in cleartext or inside TLS (the load generator's own rustls client, so a check
//! negotiates exactly what the load will), with what the handshake chose reported, and HTTP/2
//! exchanges over it (`h2.rs`) for servers that speak only that. HTTP/1.1 bytes are the caller's
//! to write and parse.

mod h2;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use rustls::{ClientConnection, StreamOwned};

use crate::target::Protocol;
use crate::tls::{TlsClient, TlsSettings};

pub use crate::tls::Negotiated;
pub use h2::{H2Exchange, H2Request, H2Response, CLOSED};

/// One connection's byte stream: as it is, or inside TLS.
pub enum Stream {
    /// Cleartext TCP.
    Plain(TcpStream),
    /// TLS over TCP, its handshake complete.
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
}

impl Stream {
    /// Connects to `addr` (every connect, read and write bounded by `timeout`) and, with `tls`,
    /// completes a handshake offering `protocol` by ALPN. The handshake's choices come back with
    /// the stream (None in cleartext).
    pub fn connect(
        addr: SocketAddr,
        tls: Option<&TlsSettings>,
        protocol: Protocol,
        timeout: Duration,
    ) -> Result<(Stream, Option<Negotiated>), String> {
        let tcp = TcpStream::connect_timeout(&addr, timeout).map_err(|e| format!("connect: {e}"))?;
        tcp.set_read_timeout(Some(timeout)).ok();
        tcp.set_write_timeout(Some(timeout)).ok();
        tcp.set_nodelay(true).ok();
        let Some(settings) = tls else { return Ok((Stream::Plain(tcp), None)) };
        let client = TlsClient::new(settings, protocol).map_err(|e| e.to_string())?;
        let conn = client.connect(addr).map_err(|e| format!("TLS: {e}"))?;
        let mut tls = StreamOwned::new(conn, tcp);
        while tls.conn.is_handshaking() {
            tls.conn.complete_io(&mut tls.sock).map_err(|e| handshake_error(&e))?;
        }
        let negotiated = Negotiated::of(&tls.conn);
        Ok((Stream::Tls(Box::new(tls)), Some(negotiated)))
    }
}

fn handshake_error(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => "TLS handshake: timed out (is it a TLS server?)".into(),
        // A record of no TLS content type: cleartext bytes (an HTTP/1.1 answer) where a ServerHello was due.
        _ if matches!(
            e.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>()),
            Some(rustls::Error::InvalidMessage(rustls::InvalidMessage::InvalidContentType))
        ) =>
        {
            "TLS handshake: the server answered in cleartext; it does not speak TLS on this port".into()
        }
        _ => format!("TLS handshake: {e}"),
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(s) => match s.read(buf) {
                // A peer that closes without close_notify ends the stream as cleartext would.
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(0),
                r => r,
            },
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}
