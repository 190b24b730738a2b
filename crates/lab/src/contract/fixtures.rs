//! Deterministic fixtures of the scenarios (records, products, documents), written into a run's data
//! directory, and the expected answers the verifier derives from them. docs/scenarios.md is the contract.

use anyhow::{Context, Result};
use serde::Serialize;
use std::path::Path;

pub(crate) const RECORDS: usize = 1000;
pub(crate) const PRODUCTS: i64 = 20;
pub(crate) const DOCUMENTS: i64 = 100;

#[derive(Debug, Clone, Serialize, PartialEq)]
pub(crate) struct Record {
    pub(crate) id: u32,
    pub(crate) name: String,
    pub(crate) description: &'static str,
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
    pub(crate) count: u32,
    pub(crate) created_at: f64,
}

pub(crate) fn record(i: usize) -> Record {
    Record {
        id: i as u32,
        name: format!("My name {i}"),
        description: "Some words on here so it looks full",
        kind: ["U", "A", "S"][i % 3],
        count: ((37 * i + 33) % 1000) as u32,
        created_at: 1569882498.125 + 60.25 * i as f64,
    }
}

pub(crate) fn records() -> Vec<Record> {
    (0..RECORDS).map(record).collect()
}

/// Canonical compact JSON of the first `k` records: what the json scenario encodes and transfer sends.
pub(crate) fn records_json(k: usize) -> String {
    serde_json::to_string(&(0..k).map(record).collect::<Vec<_>>()).expect("records serialize")
}

/// The msgpack scenario's answer: the sum of `count` over all records.
pub(crate) fn count_sum() -> u64 {
    (0..RECORDS).map(|i| record(i).count as u64).sum()
}

/// The loop scenario's answer, computed by the contract's definition.
pub(crate) fn loop_count(n: u64) -> u64 {
    (0..n).filter(|i| (3 * i + 1) % 7 == 0).count() as u64
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub(crate) struct Product {
    pub(crate) id: i64,
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) price: f64,
    pub(crate) stock: i64,
    pub(crate) created_at: String,
}

pub(crate) fn products() -> Vec<Product> {
    (1..=PRODUCTS)
        .map(|i| Product {
            id: i,
            name: format!("Product {i}"),
            description: format!("A fine product number {i} for the benchmark"),
            price: 2.0 * i as f64 + 0.99,
            stock: (13 * i) % 50 + 1,
            created_at: format!("2024-01-{i:02}T12:00:00Z"),
        })
        .collect()
}

pub(crate) const PRODUCT_DDL: &str = "CREATE TABLE product (id INTEGER PRIMARY KEY, name TEXT NOT NULL, \
description TEXT NOT NULL, price DOUBLE PRECISION NOT NULL, stock INTEGER NOT NULL, created_at TEXT NOT NULL);";

const DOCUMENT_BODY: &str = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor \
incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris \
nisi ut aliquip ex ea commodo consequat. Duis aute irure dolor in reprehenderit in voluptate velit esse cillum dolore.";

/// Document `i` as served (without `_id`).
pub(crate) fn document(i: i64) -> serde_json::Value {
    serde_json::json!({
        "title": format!("Document {i}"),
        "author": format!("Author {}", i % 10),
        "tags": [format!("tag{}", i % 5), "bench"],
        "views": 13 * i,
        "published": i % 2 == 0,
        "body": DOCUMENT_BODY,
    })
}

fn documents_json() -> String {
    let docs: Vec<serde_json::Value> = (0..DOCUMENTS)
        .map(|i| {
            let mut d = serde_json::Map::new();
            d.insert("_id".into(), i.into());
            d.extend(document(i).as_object().expect("object").clone());
            serde_json::Value::Object(d)
        })
        .collect();
    serde_json::to_string(&docs).expect("documents serialize")
}

fn records_msgpack() -> Vec<u8> {
    let mut out = Vec::with_capacity(100_000);
    rmp::encode::write_array_len(&mut out, RECORDS as u32).expect("vec write");
    for r in records() {
        let mut one = Vec::with_capacity(128);
        rmp::encode::write_map_len(&mut one, 6).expect("vec write");
        let str_field = |buf: &mut Vec<u8>, k: &str, v: &str| {
            rmp::encode::write_str(buf, k).expect("vec write");
            rmp::encode::write_str(buf, v).expect("vec write");
        };
        rmp::encode::write_str(&mut one, "id").expect("vec write");
        rmp::encode::write_uint(&mut one, r.id as u64).expect("vec write");
        str_field(&mut one, "name", &r.name);
        str_field(&mut one, "description", r.description);
        str_field(&mut one, "type", r.kind);
        rmp::encode::write_str(&mut one, "count").expect("vec write");
        rmp::encode::write_uint(&mut one, r.count as u64).expect("vec write");
        rmp::encode::write_str(&mut one, "created_at").expect("vec write");
        rmp::encode::write_f64(&mut one, r.created_at).expect("vec write");
        rmp::encode::write_bin(&mut out, &one).expect("vec write");
    }
    out
}

fn sql_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// The product table as portable SQL, for PostgreSQL.
pub(crate) fn products_sql() -> String {
    let mut sql = format!("{PRODUCT_DDL}\n");
    for p in products() {
        sql.push_str(&format!(
            "INSERT INTO product VALUES ({}, {}, {}, {:?}, {}, {});\n",
            p.id,
            sql_quote(&p.name),
            sql_quote(&p.description),
            p.price,
            p.stock,
            sql_quote(&p.created_at)
        ));
    }
    sql
}

fn write_sqlite(path: &Path) -> Result<()> {
    if path.exists() {
        std::fs::remove_file(path)?;
    }
    let db = rusqlite::Connection::open(path)?;
    db.execute_batch(PRODUCT_DDL)?;
    let mut insert = db.prepare("INSERT INTO product VALUES (?1, ?2, ?3, ?4, ?5, ?6)")?;
    for p in products() {
        insert.execute(rusqlite::params![p.id, p.name, p.description, p.price, p.stock, p.created_at])?;
    }
    Ok(())
}

/// Writes every fixture file into `dir` (created if missing).
pub fn write_all(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating fixture directory {}", dir.display()))?;
    let write =
        |name: &str, bytes: &[u8]| std::fs::write(dir.join(name), bytes).with_context(|| format!("writing {}", dir.join(name).display()));
    write("records.msgpack", &records_msgpack())?;
    write("records.json", records_json(RECORDS).as_bytes())?;
    write("products.sql", products_sql().as_bytes())?;
    write("documents.json", documents_json().as_bytes())?;
    write_sqlite(&dir.join("products.sqlite")).context("writing products.sqlite")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_zero_matches_the_contract_byte_for_byte() {
        assert_eq!(
            records_json(1),
            r#"[{"id":0,"name":"My name 0","description":"Some words on here so it looks full","type":"U","count":33,"created_at":1569882498.125}]"#
        );
    }

    #[test]
    fn documented_sizes_and_answers_hold() {
        assert_eq!(records_json(RECORDS).len(), 134_671);
        assert_eq!(count_sum(), 499_500);
        assert_eq!(loop_count(1_000_000), 142_857);
        assert_eq!(loop_count(10), 1 + 1); // i = 2 and i = 9
    }

    #[test]
    fn no_float_is_integral_so_every_language_prints_it_alike() {
        assert!(records().iter().all(|r| r.created_at.fract() != 0.0));
        assert!(products().iter().all(|p| p.price.fract() != 0.0));
    }

    #[test]
    fn msgpack_fixture_decodes_to_the_same_records() {
        let bytes = records_msgpack();
        let mut rd = &bytes[..];
        assert_eq!(rmp::decode::read_array_len(&mut rd).unwrap(), 1000);
        let len = rmp::decode::read_bin_len(&mut rd).unwrap() as usize;
        let first = &rd[..len];
        assert_eq!(first.len(), 103);
        let mut r = first;
        assert_eq!(rmp::decode::read_map_len(&mut r).unwrap(), 6);
    }

    #[test]
    fn documents_are_about_420_bytes() {
        for i in [0, 50, 99] {
            let n = serde_json::to_string(&document(i)).unwrap().len();
            assert!((400..=440).contains(&n), "document {i} is {n} bytes");
        }
    }

    #[test]
    fn write_all_creates_every_file_and_sqlite_holds_twenty_rows() {
        let dir = std::env::temp_dir().join(format!("bakeoff-fixtures-{}", std::process::id()));
        write_all(&dir).unwrap();
        for f in ["records.msgpack", "records.json", "products.sqlite", "products.sql", "documents.json"] {
            assert!(dir.join(f).exists(), "{f}");
        }
        let db = rusqlite::Connection::open(dir.join("products.sqlite")).unwrap();
        let n: i64 = db.query_row("SELECT count(*) FROM product", [], |r| r.get(0)).unwrap();
        assert_eq!(n, 20);
        let price: f64 = db.query_row("SELECT price FROM product WHERE id = 3", [], |r| r.get(0)).unwrap();
        assert_eq!(price, 6.99);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
