//! The {{stack}} stack: an HTTP/1.1 keep-alive server on the standard library alone, WORKERS
//! threads accepting from one $HOST:$PORT listener, each serving its connection to the end.
//! Replace it with the framework you want to measure (axum, actix-web, hyper...).

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;

const HELLO: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 12\r\n\r\nHello World!";
const NOT_FOUND: &[u8] = b"HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 9\r\n\r\nnot found";

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Serves one keep-alive connection: reads each request's head, answers by its path.
fn serve(stream: TcpStream) -> std::io::Result<()> {
    stream.set_nodelay(true)?;
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
        // The rest of the head; these requests carry no body.
        loop {
            line.clear();
            if reader.read_line(&mut line)? == 0 {
                return Ok(());
            }
            if line == "\r\n" || line == "\n" {
                break;
            }
        }
        writer.write_all(if path == "/" { HELLO } else { NOT_FOUND })?;
    }
}

fn main() -> std::io::Result<()> {
    let port = env_number("PORT", 8080);
    let workers = env_number("WORKERS", 1).max(1);
    // HOST is the address to bind: 127.0.0.1, or the server host's own address when the lab places
    // the server on a host of its own. Never 0.0.0.0: a benchmark never opens a port to the network.
    let host = std::env::var("HOST").ok().filter(|h| !h.is_empty()).unwrap_or_else(|| "127.0.0.1".into());
    let listener = Arc::new(TcpListener::bind((host.as_str(), port as u16))?);
    eprintln!("{{stack}} listening on {host}:{port} with {workers} worker threads");
    let threads: Vec<_> = (0..workers)
        .map(|_| {
            let listener = Arc::clone(&listener);
            std::thread::spawn(move || loop {
                if let Ok((stream, _)) = listener.accept() {
                    let _ = serve(stream);
                }
            })
        })
        .collect();
    for t in threads {
        let _ = t.join();
    }
    Ok(())
}
