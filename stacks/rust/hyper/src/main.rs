//! The rust/hyper stack: a hyper 1.x server on a tokio runtime, its router and every scenario's per-request work.

use std::cell::RefCell;
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, LazyLock};

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use regex::Regex;
use serde::{Deserialize, Serialize};
use tokio::net::TcpListener;

/// One fixture record; field order is the canonical JSON key order.
#[derive(Serialize, Deserialize)]
struct Record {
    id: i64,
    name: String,
    description: String,
    #[serde(rename = "type")]
    kind: String,
    count: i64,
    created_at: f64,
}

/// One row of table `product`.
#[derive(Serialize)]
struct Product {
    id: i64,
    name: String,
    description: String,
    price: f64,
    stock: i64,
    created_at: String,
}

enum Db {
    /// Path of the SQLite file; each runtime thread opens its own connection (see `sqlite_products`).
    Sqlite(String),
    Postgres(deadpool_postgres::Pool),
}

struct State {
    /// GREETING_REGEX=per-request: the seed article's original bug, the greeting regex compiled on
    /// every request (the regex-per-request variant, a deliberate reproduction).
    regex_per_request: bool,
    packed: Vec<serde_bytes::ByteBuf>,
    records: Vec<Record>,
    transfer: Bytes,
    db: Option<Db>,
}

const GREETING_PATTERN: &str = r"^/greeting/([a-z]+)$";

// The article's corrected version: anchored, and compiled once rather than on every request.
static GREETING: LazyLock<Regex> = LazyLock::new(|| Regex::new(GREETING_PATTERN).unwrap());

const PRODUCTS_SQL: &str = "SELECT id, name, description, price, stock, created_at FROM product ORDER BY id";

type Resp = Response<Full<Bytes>>;

fn respond(status: StatusCode, ctype: &'static str, body: impl Into<Bytes>) -> Resp {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(ctype));
    r
}

fn text(body: impl Into<Bytes>) -> Resp {
    respond(StatusCode::OK, "text/plain", body)
}

fn status(code: StatusCode) -> Resp {
    respond(code, "text/plain", code.canonical_reason().unwrap_or(""))
}

/// Query parameter `name` as an integer in [lo, hi]; absent gives `def`, anything else is `None` (400).
fn int_param(req: &Request<Incoming>, name: &str, def: i64, lo: i64, hi: i64) -> Option<i64> {
    let q = req.uri().query().unwrap_or("");
    match form_urlencoded::parse(q.as_bytes()).find(|(k, _)| k == name) {
        None => Some(def),
        Some((_, v)) => v.parse::<i64>().ok().filter(|n| (lo..=hi).contains(n)),
    }
}

async fn route(st: Arc<State>, req: Request<Incoming>) -> Result<Resp, Infallible> {
    if req.method() != Method::GET {
        return Ok(status(StatusCode::NOT_FOUND));
    }
    // The original service compiled the regex at the top of its handler, for every request.
    let per_request = st.regex_per_request.then(|| Regex::new(GREETING_PATTERN).unwrap());
    let greeting: &Regex = per_request.as_ref().unwrap_or(&GREETING);
    let path = req.uri().path();
    Ok(match path {
        "/" => text("Hello World!"),
        "/msgpack" => msgpack_sum(&st),
        "/json" => match int_param(&req, "n", 1000, 1, st.records.len() as i64) {
            Some(k) => json_len(&st, k as usize),
            None => status(StatusCode::BAD_REQUEST),
        },
        "/transfer" => respond(StatusCode::OK, "application/json", st.transfer.clone()),
        "/loop" => match int_param(&req, "n", 1_000_000, 0, 10_000_000) {
            Some(n) => text(count_loop(n).to_string()),
            None => status(StatusCode::BAD_REQUEST),
        },
        "/products" => products(&st).await,
        _ => match greeting.captures(path) {
            Some(c) => text(format!("Hello, {}", &c[1])),
            None => status(StatusCode::NOT_FOUND),
        },
    })
}

fn msgpack_sum(st: &State) -> Resp {
    let mut sum: i64 = 0;
    for b in &st.packed {
        match rmp_serde::from_slice::<Record>(b) {
            Ok(r) => sum += r.count,
            Err(e) => return respond(StatusCode::INTERNAL_SERVER_ERROR, "text/plain", e.to_string()),
        }
    }
    text(sum.to_string())
}

fn json_len(st: &State, k: usize) -> Resp {
    match serde_json::to_vec(&st.records[..k]) {
        Ok(v) => text(v.len().to_string()),
        Err(e) => respond(StatusCode::INTERNAL_SERVER_ERROR, "text/plain", e.to_string()),
    }
}

fn count_loop(n: i64) -> i64 {
    let mut c = 0;
    for i in 0..n {
        if (3 * i + 1) % 7 == 0 {
            c += 1;
        }
    }
    c
}

async fn products(st: &State) -> Resp {
    let rows = match &st.db {
        None => Err("DATABASE_URL not set".to_string()),
        Some(Db::Sqlite(path)) => sqlite_products(path).map_err(|e| e.to_string()),
        Some(Db::Postgres(pool)) => pg_products(pool).await,
    };
    match rows.and_then(|r| serde_json::to_vec(&r).map_err(|e| e.to_string())) {
        Ok(body) => respond(StatusCode::OK, "application/json", body),
        Err(e) => respond(StatusCode::INTERNAL_SERVER_ERROR, "text/plain", e),
    }
}

thread_local! {
    // rusqlite connections are not Sync: one per runtime worker thread, opened on first use. A
    // 20-row read takes microseconds, so it runs on the worker thread rather than spawn_blocking.
    static SQLITE: RefCell<Option<rusqlite::Connection>> = const { RefCell::new(None) };
}

fn sqlite_products(path: &str) -> rusqlite::Result<Vec<Product>> {
    SQLITE.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            *slot = Some(rusqlite::Connection::open_with_flags(
                path,
                rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )?);
        }
        let conn = slot.as_ref().unwrap();
        let mut stmt = conn.prepare_cached(PRODUCTS_SQL)?;
        let rows = stmt.query_map([], |r| {
            Ok(Product {
                id: r.get(0)?,
                name: r.get(1)?,
                description: r.get(2)?,
                price: r.get(3)?,
                stock: r.get(4)?,
                created_at: r.get(5)?,
            })
        })?;
        rows.collect()
    })
}

async fn pg_products(pool: &deadpool_postgres::Pool) -> Result<Vec<Product>, String> {
    let client = pool.get().await.map_err(|e| e.to_string())?;
    let stmt = client.prepare_cached(PRODUCTS_SQL).await.map_err(|e| e.to_string())?;
    let rows = client.query(&stmt, &[]).await.map_err(|e| e.to_string())?;
    Ok(rows
        .iter()
        .map(|r| Product {
            id: r.get::<_, i32>(0) as i64,
            name: r.get(1),
            description: r.get(2),
            price: r.get(3),
            stock: r.get::<_, i32>(4) as i64,
            created_at: r.get(5),
        })
        .collect())
}

fn open_db(url: &str) -> Db {
    if let Some(path) = url.strip_prefix("sqlite://") {
        return Db::Sqlite(path.to_string());
    }
    let pg: tokio_postgres::Config = url.parse().expect("DATABASE_URL");
    let mgr = deadpool_postgres::Manager::new(pg, tokio_postgres::NoTls);
    // Connections open on first use, up to POOL_SIZE like every stack's pool.
    let pool = deadpool_postgres::Pool::builder(mgr).max_size(pool_size()).build().expect("pool");
    Db::Postgres(pool)
}

/// POOL_SIZE: the database connections this process may open (8 when unset).
fn pool_size() -> usize {
    std::env::var("POOL_SIZE").ok().and_then(|n| n.parse().ok()).filter(|&n| n > 0).unwrap_or(8)
}

fn load(dir: &str, db: Option<Db>) -> State {
    let raw = std::fs::read(format!("{dir}/records.msgpack")).expect("records.msgpack");
    let packed: Vec<serde_bytes::ByteBuf> = rmp_serde::from_slice(&raw).expect("outer array");
    let records = packed
        .iter()
        .map(|b| rmp_serde::from_slice::<Record>(b).expect("record"))
        .collect();
    let transfer = Bytes::from(std::fs::read(format!("{dir}/records.json")).expect("records.json"));
    let regex_per_request = std::env::var("GREETING_REGEX").is_ok_and(|v| v == "per-request");
    State { regex_per_request, packed, records, transfer, db }
}

/// The TLS server of the run's certificate (TLS_CERT, TLS_KEY), offering h2 and http/1.1 by ALPN.
fn tls_acceptor() -> tokio_rustls::TlsAcceptor {
    use tokio_rustls::rustls::pki_types::pem::PemObject;
    use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(std::env::var("TLS_CERT").expect("TLS_CERT"))
        .expect("TLS_CERT: a PEM file")
        .collect::<Result<_, _>>()
        .expect("TLS_CERT: PEM certificates");
    let key = PrivateKeyDer::from_pem_file(std::env::var("TLS_KEY").expect("TLS_KEY")).expect("TLS_KEY: a PEM private key");
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let mut config = tokio_rustls::rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .expect("the run's certificate and key");
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    tokio_rustls::TlsAcceptor::from(Arc::new(config))
}

fn main() {
    // The address to listen on: 127.0.0.1 unless the lab places the server on a host of its own.
    let host: IpAddr = std::env::var("HOST")
        .ok()
        .filter(|h| !h.is_empty())
        .map_or(IpAddr::from([127, 0, 0, 1]), |h| h.parse().expect("HOST: an IP address"));
    let port: u16 = std::env::var("PORT").expect("PORT").parse().expect("PORT");
    let workers: usize = std::env::var("WORKERS").ok().and_then(|w| w.parse().ok()).unwrap_or(1);
    let dir = std::env::var("DATA_DIR").expect("DATA_DIR");

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async move {
        let db = std::env::var("DATABASE_URL").ok().filter(|u| !u.is_empty()).map(|u| open_db(&u));
        let st = Arc::new(load(&dir, db));
        let addr = SocketAddr::new(host, port);
        let listener = TcpListener::bind(addr).await.expect("bind");
        // PROTOCOL (set by the lab): h1, h1-tls, h2 or h2c; over TLS the run's TLS_CERT and TLS_KEY.
        let protocol = std::env::var("PROTOCOL").unwrap_or_default();
        let tls = matches!(protocol.as_str(), "h1-tls" | "h2").then(tls_acceptor);
        eprintln!("rust/hyper listening on {addr} with {workers} worker threads");
        loop {
            let (stream, _) = match listener.accept().await {
                Ok(s) => s,
                Err(_) => continue,
            };
            let _ = stream.set_nodelay(true);
            let st = st.clone();
            let (protocol, tls) = (protocol.clone(), tls.clone());
            tokio::spawn(async move {
                let svc = service_fn(move |req| route(st.clone(), req));
                match (tls, protocol.as_str()) {
                    // h1-tls and h2: one rustls server offering h2 and http/1.1 by ALPN, hyper-util's
                    // auto builder serving whichever the client chose.
                    (Some(acceptor), _) => {
                        if let Ok(stream) = acceptor.accept(stream).await {
                            let _ = auto::Builder::new(TokioExecutor::new()).serve_connection(TokioIo::new(stream), svc).await;
                        }
                    }
                    // h2c: HTTP/1.1 and, after the prior-knowledge preface, cleartext HTTP/2.
                    (None, "h2c") => {
                        let _ = auto::Builder::new(TokioExecutor::new()).serve_connection(TokioIo::new(stream), svc).await;
                    }
                    (None, _) => {
                        let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), svc).await;
                    }
                }
            });
        }
    });
}
