// The node/cluster-http stack: cluster primary forking WORKERS http workers, a regex route table and every scenario.
'use strict';

const cluster = require('node:cluster');
const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');

const PORT = Number(process.env.PORT);
// The address to listen on: 127.0.0.1 unless the lab places the server on a host of its own.
const HOST = process.env.HOST || '127.0.0.1';
const WORKERS = Math.max(1, Number(process.env.WORKERS) || 1);

if (cluster.isPrimary) {
  for (let i = 0; i < WORKERS; i++) cluster.fork();
  // A worker that dies is an error in the run: stop everything rather than hide it behind a respawn.
  cluster.on('exit', (w, code, signal) => {
    console.error(`worker ${w.process.pid} exited (${signal || code})`);
    process.exit(1);
  });
  process.on('SIGTERM', () => {
    for (const id in cluster.workers) cluster.workers[id].process.kill('SIGTERM');
    process.exit(0);
  });
} else {
  worker();
}

function worker() {
  const { unpack } = require('msgpackr');
  const dataDir = process.env.DATA_DIR;

  // The 1,000 encoded records (Buffers), decoded again on every /msgpack request.
  const packed = unpack(fs.readFileSync(path.join(dataDir, 'records.msgpack')));
  const records = packed.map((b) => unpack(b));
  const transfer = fs.readFileSync(path.join(dataDir, 'records.json'));
  const { products, shop } = openDatabase(process.env.DATABASE_URL);

  function send(res, status, type, body) {
    res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  }
  const text = (res, body) => send(res, 200, 'text/plain', body);

  // Query parameter as an integer in [lo, hi]; undefined for a bad value (400), def when absent.
  function intParam(query, name, def, lo, hi) {
    const v = new URLSearchParams(query).get(name);
    if (v === null) return def;
    if (!/^-?\d+$/.test(v)) return undefined;
    const n = Number(v);
    return n >= lo && n <= hi ? n : undefined;
  }

  // The route table: regexes compiled once, tried in order (the article's router).
  const routes = [
    [/^\/$/, (req, res) => text(res, 'Hello World!')],
    [/^\/greeting\/([a-z]+)$/, (req, res, m) => text(res, 'Hello, ' + m[1])],
    [/^\/msgpack$/, (req, res) => {
      let sum = 0;
      for (let i = 0; i < packed.length; i++) sum += unpack(packed[i]).count;
      text(res, String(sum));
    }],
    [/^\/json$/, (req, res, m, query) => {
      const k = intParam(query, 'n', 1000, 1, records.length);
      if (k === undefined) return send(res, 400, 'text/plain', 'bad n');
      text(res, String(Buffer.byteLength(JSON.stringify(records.slice(0, k)))));
    }],
    [/^\/transfer$/, (req, res) => send(res, 200, 'application/json', transfer)],
    [/^\/loop$/, (req, res, m, query) => {
      const n = intParam(query, 'n', 1000000, 0, 10000000);
      if (n === undefined) return send(res, 400, 'text/plain', 'bad n');
      let c = 0;
      for (let i = 0; i < n; i++) if ((3 * i + 1) % 7 === 0) c++;
      text(res, String(c));
    }],
    [/^\/products$/, (req, res) => {
      products().then(
        (rows) => send(res, 200, 'application/json', JSON.stringify(rows)),
        (err) => send(res, 500, 'text/plain', String(err)));
    }],
    // The shop of scenarios/shop.toml, read from the database on every request.
    [/^\/items\/(\d+)$/, (req, res, m) => {
      shop.item(Number(m[1])).then(
        (row) => (row === undefined
          ? send(res, 404, 'text/plain', 'Not Found')
          : send(res, 200, 'application/json', JSON.stringify(row))),
        (err) => send(res, 500, 'text/plain', String(err)));
    }],
    [/^\/search$/, (req, res, m, query) => {
      // The items tagged q, by id.
      shop.search(new URLSearchParams(query).get('q') ?? '').then(
        (rows) => send(res, 200, 'application/json', JSON.stringify(rows)),
        (err) => send(res, 500, 'text/plain', String(err)));
    }],
  ];

  // POST /cart: the cart line written, 201; 404 for an unknown item, 400 for a body that is not
  // {"item": n, "qty": n}.
  function cart(req, res) {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      let body;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString());
      } catch {
        body = null;
      }
      if (body === null || typeof body !== 'object' || !Number.isInteger(body.item) || !Number.isInteger(body.qty)) {
        return send(res, 400, 'text/plain', 'the body must be {"item": n, "qty": n}');
      }
      shop.cart(body.qty, body.item).then(
        (row) => (row === undefined
          ? send(res, 404, 'text/plain', 'Not Found')
          : send(res, 201, 'application/json', JSON.stringify(row))),
        (err) => send(res, 500, 'text/plain', String(err)));
    });
  }

  serve((req, res) => {
    const q = req.url.indexOf('?');
    const pathname = q < 0 ? req.url : req.url.slice(0, q);
    const query = q < 0 ? '' : req.url.slice(q + 1);
    if (req.method === 'GET') {
      for (const [re, handler] of routes) {
        const m = re.exec(pathname);
        if (m) return handler(req, res, m, query);
      }
    } else if (req.method === 'POST' && pathname === '/cart') {
      return cart(req, res);
    }
    send(res, 404, 'text/plain', 'Not Found');
  }).listen(PORT, HOST);
}

// The server of the PROTOCOL the lab sets, each Node's own module for it: node:http (h1),
// node:https (h1-tls), node:http2's secure server offering h2 and http/1.1 by ALPN (h2), or its
// cleartext server, prior knowledge only (h2c). TLS_CERT and TLS_KEY are the run's certificate.
// The compatibility API hands every one of them the same (req, res), so the handlers are shared.
function serve(handler) {
  const tls = () => ({ cert: fs.readFileSync(process.env.TLS_CERT), key: fs.readFileSync(process.env.TLS_KEY) });
  switch (process.env.PROTOCOL) {
    case 'h1-tls': return require('node:https').createServer(tls(), handler);
    case 'h2': return require('node:http2').createSecureServer({ ...tls(), allowHTTP1: true }, handler);
    case 'h2c': return require('node:http2').createServer({}, handler);
    default: return http.createServer(handler);
  }
}

// Returns { products, shop }: async functions running their query on every call (products: all
// rows; shop.item and shop.cart: the row or undefined; shop.search: the rows), or ones that fail
// without a database.
function openDatabase(url) {
  const productsSql = 'SELECT id, name, description, price, stock, created_at FROM product ORDER BY id';
  // The shop's queries in SQLite's placeholders; PostgreSQL's are numbered ($1, $2) by pgText.
  const itemSql = 'SELECT id, name, price FROM items WHERE id = ?';
  const searchSql = 'SELECT i.id, i.name, i.price FROM items i JOIN tags t ON t.item_id = i.id WHERE t.tag = ? ORDER BY i.id';
  const cartSql = 'INSERT INTO cart (item_id, qty) SELECT id, ? FROM items WHERE id = ? RETURNING id, item_id, qty';
  const pgText = (sql) => { let n = 0; return sql.replace(/\?/g, () => `$${++n}`); };
  if (!url) {
    const none = async () => { throw new Error('DATABASE_URL not set'); };
    return { products: none, shop: { item: none, search: none, cart: none } };
  }
  if (url.startsWith('sqlite://')) {
    const Database = require('better-sqlite3');
    // Read-write: POST /cart writes. Every worker process has its own connection and writes one at
    // a time; the timeout makes a writer wait up to 5 s for the lock.
    const db = new Database(url.slice('sqlite://'.length), { timeout: 5000 });
    // Each statement is prepared once per worker, on first use (a products database has no shop
    // tables, nor a shop database a product table), and run again on every request.
    const prepared = new Map();
    const stmt = (sql) => {
      let s = prepared.get(sql);
      if (s === undefined) prepared.set(sql, (s = db.prepare(sql)));
      return s;
    };
    // better-sqlite3 is synchronous; these reads and the one-row insert take microseconds, so
    // they run on the event loop.
    return {
      products: async () => stmt(productsSql).all(),
      shop: {
        item: async (id) => stmt(itemSql).get(id),
        search: async (word) => stmt(searchSql).all(word),
        cart: async (qty, item) => stmt(cartSql).get(qty, item),
      },
    };
  }
  const { Pool } = require('pg');
  // POOL_SIZE connections per worker process (8 when unset): WORKERS * POOL_SIZE in total.
  const pool = new Pool({ connectionString: url, max: Math.max(1, Number(process.env.POOL_SIZE) || 8) });
  // Named queries: pg prepares each once per connection and executes it by name afterwards.
  const query = async (name, text, values) => (await pool.query({ name, text, values })).rows;
  const [itemText, searchText, cartText] = [itemSql, searchSql, cartSql].map(pgText);
  // The id column is a 32-bit INTEGER: a larger id names no item (PostgreSQL would refuse it).
  const mayExist = (id) => Number.isInteger(id) && id >= -2147483648 && id <= 2147483647;
  return {
    products: () => query('products', productsSql),
    shop: {
      item: async (id) => (mayExist(id) ? (await query('item', itemText, [id]))[0] : undefined),
      search: (word) => query('search', searchText, [word]),
      cart: async (qty, item) => (mayExist(item) ? (await query('cart', cartText, [qty, item]))[0] : undefined),
    },
  };
}
