// The node/cluster-http stack: cluster primary forking WORKERS http workers, a regex route table and every scenario.
'use strict';

const cluster = require('node:cluster');
const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');

const PORT = Number(process.env.PORT);
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
  const products = openProducts(process.env.DATABASE_URL);
  // The shop of scenarios/shop.toml: 50 items, id i at index i - 1, stringified on every request.
  const WORDS = ['red', 'blue', 'green', 'oak', 'steel'];
  const items = [];
  for (let i = 1; i <= 50; i++) items.push({ id: i, name: `item ${i}`, tags: [WORDS[i % 5], WORDS[(i * 3) % 5]] });
  const itemById = (id) => (Number.isInteger(id) && id >= 1 && id <= items.length ? items[id - 1] : undefined);

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
    [/^\/items\/(\d+)$/, (req, res, m) => {
      const item = itemById(Number(m[1]));
      if (item === undefined) return send(res, 404, 'text/plain', 'Not Found');
      send(res, 200, 'application/json', JSON.stringify(item));
    }],
    [/^\/search$/, (req, res, m, query) => {
      // The ids tagged q, ascending, looked up on every request.
      const q = new URLSearchParams(query).get('q') ?? '';
      const found = [];
      for (const item of items) if (item.tags.includes(q)) found.push(item.id);
      send(res, 200, 'application/json', JSON.stringify({ q, items: found }));
    }],
  ];

  // POST /cart: 201 for a known item, 404 for an unknown one, 400 for a body that is not
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
      if (itemById(body.item) === undefined) return send(res, 404, 'text/plain', 'Not Found');
      send(res, 201, 'text/plain', `added ${body.qty} of ${body.item}`);
    });
  }

  http.createServer((req, res) => {
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
  }).listen(PORT, '127.0.0.1');
}

// Returns an async function reading all products on each call, or one that fails without a database.
function openProducts(url) {
  const sql = 'SELECT id, name, description, price, stock, created_at FROM product ORDER BY id';
  if (!url) return async () => { throw new Error('DATABASE_URL not set'); };
  if (url.startsWith('sqlite://')) {
    const Database = require('better-sqlite3');
    const stmt = new Database(url.slice('sqlite://'.length), { readonly: true }).prepare(sql);
    // better-sqlite3 is synchronous; a 20-row read is microseconds, so it runs on the event loop.
    return async () => stmt.all();
  }
  const { Pool } = require('pg');
  // POOL_SIZE connections per worker process (8 when unset): WORKERS * POOL_SIZE in total.
  const pool = new Pool({ connectionString: url, max: Math.max(1, Number(process.env.POOL_SIZE) || 8) });
  return async () => (await pool.query({ name: 'products', text: sql })).rows;
}
