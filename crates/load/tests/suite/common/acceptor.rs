//! Test helper: a listener on 127.0.0.1:0 with its own accept thread, counting connections and
//! handing each to the server that owns it; stopped and joined on drop. Shared by the test servers.

use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

pub struct Acceptor {
    port: u16,
    accepts: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Acceptor {
    /// Accepts until dropped. `serve` gets each connection with the stop flag and returns the thread
    /// serving it, or None when it served the connection before returning.
    pub fn start(mut serve: impl FnMut(TcpStream, Arc<AtomicBool>) -> Option<JoinHandle<()>> + Send + 'static) -> Acceptor {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        l.set_nonblocking(true).unwrap();
        let (accepts, stop) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicBool::new(false)));
        let (a, s) = (accepts.clone(), stop.clone());
        let handle = std::thread::spawn(move || {
            let mut conns = Vec::new();
            while !s.load(Ordering::Relaxed) {
                match l.accept() {
                    Ok((c, _)) => {
                        a.fetch_add(1, Ordering::Relaxed);
                        conns.extend(serve(c, s.clone()));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(1)),
                }
            }
            for c in conns {
                let _ = c.join();
            }
        });
        Acceptor { port, accepts, stop, handle: Some(handle) }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Connections accepted so far.
    pub fn accepts(&self) -> u64 {
        self.accepts.load(Ordering::Relaxed)
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/", self.port)
    }
}

impl Drop for Acceptor {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}
