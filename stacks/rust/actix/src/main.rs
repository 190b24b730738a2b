//! The rust/actix stack: an actix-web 4 server, its routes and every scenario's per-request work.

use actix_web::http::header::ContentType;
use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use rusqlite::OptionalExtension;
use tokio_postgres::types::{ToSql, Type};
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
}

/// A worker thread's own SQLite connection (rusqlite connections are not `Sync`); the factory
/// closure of `HttpServer::new` runs once per worker and opens it.
struct Sqlite(rusqlite::Connection);

/// The `n` query parameter; actix answers 400 when it is not an integer.
#[derive(Deserialize)]
struct N {
    n: Option<i64>,
}

/// One row of the shop's table `items` (scenarios/shop.toml); field order is its JSON key order.
#[derive(Serialize)]
struct Item {
    id: i64,
    name: String,
    price: i64,
}

/// The `q` query parameter of /search.
#[derive(Deserialize)]
struct Query {
    q: Option<String>,
}

/// The body of POST /cart; `web::Json` answers 400 when it is not `{"item": n, "qty": n}`.
#[derive(Deserialize)]
struct Cart {
    item: i64,
    qty: i64,
}

/// The row POST /cart wrote to table `cart`.
#[derive(Serialize)]
struct CartLine {
    id: i64,
    item_id: i64,
    qty: i64,
}

const PRODUCTS_SQL: &str = "SELECT id, name, description, price, stock, created_at FROM product ORDER BY id";

// The shop's queries, in SQLite's placeholders and in PostgreSQL's.
const ITEM_SQLITE: &str = "SELECT id, name, price FROM items WHERE id = ?1";
const ITEM_PG: &str = "SELECT id, name, price FROM items WHERE id = $1";
const SEARCH_SQLITE: &str =
    "SELECT i.id, i.name, i.price FROM items i JOIN tags t ON t.item_id = i.id WHERE t.tag = ?1 ORDER BY i.id";
const SEARCH_PG: &str =
    "SELECT i.id, i.name, i.price FROM items i JOIN tags t ON t.item_id = i.id WHERE t.tag = $1 ORDER BY i.id";
const CART_SQLITE: &str = "INSERT INTO cart (item_id, qty) SELECT id, ?1 FROM items WHERE id = ?2 RETURNING id, item_id, qty";
const CART_PG: &str = "INSERT INTO cart (item_id, qty) SELECT id, $1 FROM items WHERE id = $2 RETURNING id, item_id, qty";

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

/// A shop query's outcome: the rows (or row) it returned, or the error's message.
type Rows<T> = Result<T, String>;

fn sqlite_item(row: &rusqlite::Row) -> rusqlite::Result<Item> {
    Ok(Item { id: row.get(0)?, name: row.get(1)?, price: row.get(2)? })
}

fn pg_item(row: &tokio_postgres::Row) -> Item {
    // INTEGER columns are int4 in PostgreSQL.
    Item { id: row.get::<_, i32>(0) as i64, name: row.get(1), price: row.get::<_, i32>(2) as i64 }
}

/// A JSON answer with the given status, or 500 when encoding fails.
fn json(mut builder: actix_web::HttpResponseBuilder, value: &impl Serialize) -> HttpResponse {
    match serde_json::to_vec(value) {
        Ok(body) => builder.content_type(ContentType::json()).body(body),
        Err(e) => error(HttpResponse::InternalServerError(), e.to_string()),
    }
}

/// The shop's answer to a query: `found` with the row(s) as JSON, 404 when no row came back, 500
/// when the query failed.
fn shop_answer<T: Serialize>(found: actix_web::HttpResponseBuilder, rows: Rows<Option<T>>) -> HttpResponse {
    match rows {
        Ok(Some(value)) => json(found, &value),
        Ok(None) => error(HttpResponse::NotFound(), "Not Found".into()),
        Err(e) => error(HttpResponse::InternalServerError(), e),
    }
}

fn no_database() -> HttpResponse {
    error(HttpResponse::ServiceUnavailable(), "DATABASE_URL is not set".into())
}

/// The shop's item by id, read from the database on every request; no such row is 404.
async fn item(req: HttpRequest, state: web::Data<Shared>, id: web::Path<String>) -> HttpResponse {
    // The route takes digits only; an id too long for an integer names no item.
    let Ok(id) = id.parse::<i64>() else { return not_found().await };
    let row = if let Some(Sqlite(conn)) = req.app_data::<Sqlite>() {
        // One indexed row from a local file: inline on the worker thread, as /products.
        conn.prepare_cached(ITEM_SQLITE)
            .and_then(|mut stmt| stmt.query_row([id], sqlite_item).optional())
            .map_err(|e| e.to_string())
    } else if let Some(pool) = &state.pg {
        match i32::try_from(id) {
            Ok(id) => pg_query_opt(pool, ITEM_PG, &[Type::INT4], &[&id]).await.map(|row| row.as_ref().map(pg_item)),
            Err(_) => Ok(None),
        }
    } else {
        return no_database();
    };
    shop_answer(HttpResponse::Ok(), row)
}

/// The items tagged `q` (none when it is missing), by id, read from the database on every request.
async fn search(req: HttpRequest, state: web::Data<Shared>, query: web::Query<Query>) -> HttpResponse {
    let q = query.q.as_deref().unwrap_or("");
    let rows = if let Some(Sqlite(conn)) = req.app_data::<Sqlite>() {
        conn.prepare_cached(SEARCH_SQLITE)
            .and_then(|mut stmt| stmt.query_map([q], sqlite_item)?.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(|e| e.to_string())
    } else if let Some(pool) = &state.pg {
        pg_query(pool, SEARCH_PG, &[Type::TEXT], &[&q]).await.map(|rows| rows.iter().map(pg_item).collect())
    } else {
        return no_database();
    };
    shop_answer(HttpResponse::Ok(), rows.map(Some))
}

/// An item put in the cart: the line written, 201; an unknown item writes nothing and is 404. A
/// body that is not `{"item": n, "qty": n}` (or not JSON) is `web::Json`'s own 400.
async fn cart(req: HttpRequest, state: web::Data<Shared>, body: web::Json<Cart>) -> HttpResponse {
    let Cart { item, qty } = body.into_inner();
    let line = if let Some(Sqlite(conn)) = req.app_data::<Sqlite>() {
        // A one-row write; the busy timeout (open_sqlite) waits out another worker's write.
        conn.prepare_cached(CART_SQLITE)
            .and_then(|mut stmt| {
                stmt.query_row([qty, item], |r| Ok(CartLine { id: r.get(0)?, item_id: r.get(1)?, qty: r.get(2)? }))
                    .optional()
            })
            .map_err(|e| e.to_string())
    } else if let Some(pool) = &state.pg {
        // The columns are int4: an item beyond it names no row, a qty beyond it cannot be stored.
        let Ok(qty) = i32::try_from(qty) else {
            return error(HttpResponse::BadRequest(), "qty out of range".into());
        };
        match i32::try_from(item) {
            Ok(item) => pg_query_opt(pool, CART_PG, &[Type::INT4, Type::INT4], &[&qty, &item]).await.map(|row| {
                row.map(|r| CartLine {
                    id: r.get::<_, i32>(0) as i64,
                    item_id: r.get::<_, i32>(1) as i64,
                    qty: r.get::<_, i32>(2) as i64,
                })
            }),
            Err(_) => Ok(None),
        }
    } else {
        return no_database();
    };
    shop_answer(HttpResponse::Created(), line)
}

/// A query's rows from a pooled PostgreSQL connection, with a cached prepared statement whose
/// parameter types are given (int4 or text, as the values bound), not left to the server to infer.
async fn pg_query(
    pool: &deadpool_postgres::Pool,
    sql: &str,
    types: &[Type],
    params: &[&(dyn ToSql + Sync)],
) -> Rows<Vec<tokio_postgres::Row>> {
    let client = pool.get().await.map_err(|e| e.to_string())?;
    let stmt = client.prepare_typed_cached(sql, types).await.map_err(|e| e.to_string())?;
    client.query(&stmt, params).await.map_err(|e| e.to_string())
}

/// As `pg_query`, for a query that returns at most one row: that row, if any.
async fn pg_query_opt(
    pool: &deadpool_postgres::Pool,
    sql: &str,
    types: &[Type],
    params: &[&(dyn ToSql + Sync)],
) -> Rows<Option<tokio_postgres::Row>> {
    pg_query(pool, sql, types, params).await.map(|rows| rows.into_iter().next())
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
    Shared { packed, records, transfer, pg }
}

/// The SQLite path of a sqlite:///abs/path URL, opened by each worker (see `Sqlite`).
fn open_sqlite(path: &str) -> rusqlite::Connection {
    use rusqlite::OpenFlags;
    // Read-write, since the shop writes its cart; the database must exist (the lab makes it).
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = rusqlite::Connection::open_with_flags(path, flags).expect("open SQLite database");
    // Every worker has its own connection and may write: wait up to 5 s for another's lock.
    conn.busy_timeout(std::time::Duration::from_secs(5)).expect("SQLite busy timeout");
    conn
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

    // The address to listen on: 127.0.0.1 unless the lab places the server on a host of its own.
    let host = std::env::var("HOST").ok().filter(|h| !h.is_empty()).unwrap_or_else(|| "127.0.0.1".into());
    eprintln!("rust/actix listening on {host}:{port} with {workers} workers");
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
    .bind((host.as_str(), port))?
    .run()
    .await
}
