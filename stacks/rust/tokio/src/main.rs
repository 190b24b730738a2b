//! main.rs: the rust/tokio TCP proxy: accept loop plus one task per connection running copy_bidirectional.
use std::env;
use std::time::Duration;

use tokio::io::copy_bidirectional;
use tokio::net::{TcpListener, TcpStream};

fn main() {
    let port = env::var("PORT").expect("PORT must be set");
    let upstream = env::var("UPSTREAM").expect("UPSTREAM must be set");
    // WORKERS = the runtime's worker threads (default: one per CPU, tokio's own default).
    let workers = env::var("WORKERS")
        .ok()
        .and_then(|w| w.parse::<usize>().ok())
        .filter(|&w| w > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_io()
        .enable_time()
        .build()
        .expect("tokio runtime");
    // The address to listen on: 127.0.0.1 unless the lab places the server on a host of its own.
    let host = env::var("HOST").ok().filter(|h| !h.is_empty()).unwrap_or_else(|| "127.0.0.1".into());
    let addr = if host.contains(':') { format!("[{host}]:{port}") } else { format!("{host}:{port}") };
    runtime.block_on(serve(addr, upstream));
}

async fn serve(addr: String, upstream: String) {
    let listener = TcpListener::bind(&addr).await.expect("bind");
    loop {
        match listener.accept().await {
            Ok((client, _)) => {
                let upstream = upstream.clone();
                tokio::spawn(async move {
                    if let Err(e) = relay(client, &upstream).await {
                        // Resets and broken pipes from clients that leave mid-response are normal.
                        if !matches!(
                            e.kind(),
                            std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe
                        ) {
                            eprintln!("relay: {e}");
                        }
                    }
                });
            }
            Err(e) => {
                // EMFILE and friends are temporary: back off instead of spinning or exiting.
                eprintln!("accept: {e}");
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
    }
}

async fn relay(mut client: TcpStream, upstream: &str) -> std::io::Result<()> {
    let mut server = TcpStream::connect(upstream).await?;
    // Small HTTP messages must not wait for Nagle's algorithm.
    client.set_nodelay(true)?;
    server.set_nodelay(true)?;
    // Copies both ways; an EOF on one side becomes a shutdown (FIN) of the other's write half,
    // an error ends both. Both sockets are closed when they drop here.
    copy_bidirectional(&mut client, &mut server).await?;
    Ok(())
}
