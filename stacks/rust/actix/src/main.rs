//! The rust/actix stack: an actix-web 4 server, its routes and every scenario's per-request work.

use actix_web::http::header::ContentType;
use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use serde::{Deserialize, Serialize};

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

/// Start-up state shared by every worker thread (read-only).
struct Shared {
    /// The 1,000 records as encoded in the fixture, decoded again on every /msgpack request.
    packed: Vec<serde_bytes::ByteBuf>,
    /// The records decoded once, encoded again on every /json request.
    records: Vec<Record>,
    /// records.json, served as is.
    transfer: web::Bytes,
    /// The PostgreSQL pool when DATABASE_URL is a postgres:// URL.
    pg: Option<deadpool_postgres::Pool>,
    /// The shop's 50 items, ids 1 to 50 at indexes 0 to 49, encoded again on every request.
    items: Vec<Item>,
}

/// A worker thread's own SQLite connection (rusqlite connections are not `Sync`); the factory
/// closure of `HttpServer::new` runs once per worker and opens it.
struct Sqlite(rusqlite::Connection);

/// The `n` query parameter; actix answers 400 when it is not an integer.
#[derive(Deserialize)]
struct N {
    n: Option<i64>,
}

/// One item of the shop (scenarios/shop.toml); field order is its JSON key order.
#[derive(Serialize)]
struct Item {
    id: i64,
    name: String,
    tags: [&'static str; 2],
}

/// The words the shop's items are tagged with.
const WORDS: [&str; 5] = ["red", "blue", "green", "oak", "steel"];

/// The `q` query parameter of /search.
#[derive(Deserialize)]
struct Query {
    q: Option<String>,
}

/// A search's answer: the word and the ids of the items tagged with it, ascending.
#[derive(Serialize)]
struct Found<'a> {
    q: &'a str,
    items: Vec<i64>,
}

/// The body of POST /cart.
#[derive(Deserialize)]
struct Cart {
    item: i64,
    qty: i64,
}

const PRODUCTS_SQL: &str = "SELECT id, name, description, price, stock, created_at FROM product ORDER BY id";

fn text(body: impl actix_web::body::MessageBody + 'static) -> HttpResponse {
    HttpResponse::Ok().content_type(ContentType::plaintext()).body(body)
}

fn error(mut builder: actix_web::HttpResponseBuilder, message: String) -> HttpResponse {
    builder.content_type(ContentType::plaintext()).body(message)
}

async fn hello() -> HttpResponse {
    text("Hello World!")
}

async fn greeting(name: web::Path<String>) -> HttpResponse {
    text(format!("Hello, {name}"))
}

async fn msgpack_sum(state: web::Data<Shared>) -> HttpResponse {
    let mut sum = 0i64;
    for packed in &state.packed {
        match rmp_serde::from_slice::<Record>(packed) {
            Ok(record) => sum += record.count,
            Err(e) => return error(HttpResponse::InternalServerError(), e.to_string()),
        }
    }
    text(sum.to_string())
}

async fn json_length(state: web::Data<Shared>, query: web::Query<N>) -> HttpResponse {
    let k = query.n.unwrap_or(1000);
    if !(1..=state.records.len() as i64).contains(&k) {
        return error(HttpResponse::BadRequest(), "n out of range".into());
    }
    match serde_json::to_vec(&state.records[..k as usize]) {
        Ok(encoded) => text(encoded.len().to_string()),
        Err(e) => error(HttpResponse::InternalServerError(), e.to_string()),
    }
}

async fn transfer(state: web::Data<Shared>) -> HttpResponse {
    // Bytes clones are reference-counted: no copy of the 134 kB body.
    HttpResponse::Ok()
        .content_type(ContentType::json())
        .body(state.transfer.clone())
}

async fn count_loop(query: web::Query<N>) -> HttpResponse {
    let n = query.n.unwrap_or(1_000_000);
    if !(0..=10_000_000).contains(&n) {
        return error(HttpResponse::BadRequest(), "n out of range".into());
    }
    let mut count = 0i64;
    for i in 0..n {
        if (3 * i + 1) % 7 == 0 {
            count += 1;
        }
    }
    text(count.to_string())
}

fn sqlite_products(conn: &rusqlite::Connection) -> rusqlite::Result<Vec<Product>> {
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
}

async fn pg_products(pool: &deadpool_postgres::Pool) -> Result<Vec<Product>, String> {
    let client = pool.get().await.map_err(|e| e.to_string())?;
    let stmt = client.prepare_cached(PRODUCTS_SQL).await.map_err(|e| e.to_string())?;
    let rows = client.query(&stmt, &[]).await.map_err(|e| e.to_string())?;
    Ok(rows
        .iter()
        .map(|r| Product {
            // INTEGER columns are int4 in PostgreSQL.
            id: r.get::<_, i32>(0) as i64,
            name: r.get(1),
            description: r.get(2),
            price: r.get(3),
            stock: r.get::<_, i32>(4) as i64,
            created_at: r.get(5),
        })
        .collect())
}

async fn products(req: HttpRequest, state: web::Data<Shared>) -> HttpResponse {
    let rows = if let Some(Sqlite(conn)) = req.app_data::<Sqlite>() {
        // A 20-row read from a local file takes microseconds: it runs inline on the worker thread
        // rather than on actix's blocking thread pool.
        sqlite_products(conn).map_err(|e| e.to_string())
    } else if let Some(pool) = &state.pg {
        pg_products(pool).await
    } else {
        return error(HttpResponse::ServiceUnavailable(), "DATABASE_URL is not set".into());
    };
    match rows.and_then(|rows| serde_json::to_vec(&rows).map_err(|e| e.to_string())) {
        Ok(body) => HttpResponse::Ok().content_type(ContentType::json()).body(body),
        Err(e) => error(HttpResponse::InternalServerError(), e),
    }
}

/// The shop's item by id: its JSON, encoded per request; an unknown id (0, 51, too long) is 404.
async fn item(state: web::Data<Shared>, id: web::Path<String>) -> HttpResponse {
    let found = id.parse::<usize>().ok().and_then(|i| state.items.get(i.checked_sub(1)?));
    match found.map(serde_json::to_vec) {
        Some(Ok(body)) => HttpResponse::Ok().content_type(ContentType::json()).body(body),
        Some(Err(e)) => error(HttpResponse::InternalServerError(), e.to_string()),
        None => not_found().await,
    }
}

/// The ids of the items tagged `q`, ascending, looked up on every request.
async fn search(state: web::Data<Shared>, query: web::Query<Query>) -> HttpResponse {
    let q = query.q.as_deref().unwrap_or("");
    let items = state.items.iter().filter(|item| item.tags.contains(&q)).map(|item| item.id).collect();
    match serde_json::to_vec(&Found { q, items }) {
        Ok(body) => HttpResponse::Ok().content_type(ContentType::json()).body(body),
        Err(e) => error(HttpResponse::InternalServerError(), e.to_string()),
    }
}

/// An item put in the cart: 201; an unknown item is 404, a body that is not `{"item": n, "qty": n}`
/// is `web::Json`'s own 400.
async fn cart(state: web::Data<Shared>, body: web::Json<Cart>) -> HttpResponse {
    if !(1..=state.items.len() as i64).contains(&body.item) {
        return not_found().await;
    }
    HttpResponse::Created().content_type(ContentType::plaintext()).body(format!("added {} of {}", body.qty, body.item))
}

async fn not_found() -> HttpResponse {
    error(HttpResponse::NotFound(), "Not Found".into())
}

fn load(dir: &str, pg: Option<deadpool_postgres::Pool>) -> Shared {
    let raw = std::fs::read(format!("{dir}/records.msgpack")).expect("records.msgpack");
    // The fixture is an array of bin values, each one record encoded on its own.
    let packed: Vec<serde_bytes::ByteBuf> = rmp_serde::from_slice(&raw).expect("records.msgpack: array of bin");
    let records = packed
        .iter()
        .map(|b| rmp_serde::from_slice::<Record>(b).expect("records.msgpack: record"))
        .collect();
    let transfer = web::Bytes::from(std::fs::read(format!("{dir}/records.json")).expect("records.json"));
    let items = (1..=50)
        .map(|i| Item { id: i, name: format!("item {i}"), tags: [WORDS[i as usize % 5], WORDS[(i as usize * 3) % 5]] })
        .collect();
    Shared { packed, records, transfer, pg, items }
}

/// The SQLite path of a sqlite:///abs/path URL, opened by each worker (see `Sqlite`).
fn open_sqlite(path: &str) -> rusqlite::Connection {
    // Read-only: the stack never writes; the harness's live-data probe writes from outside.
    rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .expect("open SQLite database")
}

fn pg_pool(url: &str) -> deadpool_postgres::Pool {
    let config: tokio_postgres::Config = url.parse().expect("DATABASE_URL");
    let manager = deadpool_postgres::Manager::new(config, tokio_postgres::NoTls);
    // Connections open on first use, up to POOL_SIZE like every stack's pool.
    deadpool_postgres::Pool::builder(manager).max_size(pool_size()).build().expect("PostgreSQL pool")
}

/// POOL_SIZE: the database connections this process may open (8 when unset).
fn pool_size() -> usize {
    std::env::var("POOL_SIZE").ok().and_then(|n| n.parse().ok()).filter(|&n| n > 0).unwrap_or(8)
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let port: u16 = std::env::var("PORT").ok().and_then(|p| p.parse().ok()).expect("PORT");
    let workers: usize = std::env::var("WORKERS")
        .ok()
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let data_dir = std::env::var("DATA_DIR").unwrap_or_else(|_| ".".into());
    let url = std::env::var("DATABASE_URL").unwrap_or_default();

    let sqlite_path = url.strip_prefix("sqlite://").map(str::to_owned);
    let pg = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Some(pg_pool(&url))
    } else {
        None
    };
    if let Some(path) = &sqlite_path {
        drop(open_sqlite(path)); // fail at start-up, not on the first request
    }
    let shared = web::Data::new(load(&data_dir, pg));

    eprintln!("rust/actix listening on 127.0.0.1:{port} with {workers} workers");
    HttpServer::new(move || {
        let mut app = App::new()
            .app_data(shared.clone())
            .route("/", web::get().to(hello))
            // actix-router compiles the pattern once; a segment that is not [a-z]+ matches no route.
            .route("/greeting/{name:[a-z]+}", web::get().to(greeting))
            .route("/msgpack", web::get().to(msgpack_sum))
            .route("/json", web::get().to(json_length))
            .route("/transfer", web::get().to(transfer))
            .route("/loop", web::get().to(count_loop))
            .route("/products", web::get().to(products))
            // The shop of scenarios/shop.toml.
            // A non-numeric id matches no route (404), as a greeting name that is not [a-z]+ does.
            .route("/items/{id:[0-9]+}", web::get().to(item))
            .route("/search", web::get().to(search))
            .route("/cart", web::post().to(cart))
            .default_service(web::to(not_found));
        if let Some(path) = &sqlite_path {
            app = app.app_data(Sqlite(open_sqlite(path)));
        }
        app
    })
    .workers(workers)
    .bind(("127.0.0.1", port))?
    .run()
    .await
}
