// The node/cluster-connect stack: cluster primary forking WORKERS Connect apps, their routes and every scenario.
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
  const connect = require('connect');
  const Router = require('router');
  const { unpack } = require('msgpackr');
  const dataDir = process.env.DATA_DIR;

  // The 1,000 encoded records (Buffers), decoded again on every /msgpack request.
  const packed = unpack(fs.readFileSync(path.join(dataDir, 'records.msgpack')));
  const records = packed.map((b) => unpack(b));
  const transfer = fs.readFileSync(path.join(dataDir, 'records.json'));
  const products = openProducts(process.env.DATABASE_URL);
  const documents = openDocuments(process.env.DOCSTORE_URL);

  function send(res, status, type, body) {
    res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  }
  const text = (res, body) => send(res, 200, 'text/plain', body);

  // Query parameter as an integer in [lo, hi]; undefined for a bad value (400), def when absent.
  function intParam(req, name, def, lo, hi) {
    const q = req.url.indexOf('?');
    const v = q < 0 ? null : new URLSearchParams(req.url.slice(q + 1)).get(name);
    if (v === null) return def;
    if (!/^-?\d+$/.test(v)) return undefined;
    const n = Number(v);
    return n >= lo && n <= hi ? n : undefined;
  }

  // The router (pillarjs/router, Express's router as Connect middleware); regex paths compile once.
  const router = Router({ strict: true, caseSensitive: true });
  router.get('/', (req, res) => text(res, 'Hello World!'));
  router.get(/^\/greeting\/([a-z]+)$/, (req, res) => text(res, 'Hello, ' + req.params[0]));
  router.get('/msgpack', (req, res) => {
    let sum = 0;
    for (let i = 0; i < packed.length; i++) sum += unpack(packed[i]).count;
    text(res, String(sum));
  });
  router.get('/json', (req, res) => {
    const k = intParam(req, 'n', 1000, 1, records.length);
    if (k === undefined) return send(res, 400, 'text/plain', 'bad n');
    text(res, String(Buffer.byteLength(JSON.stringify(records.slice(0, k)))));
  });
  router.get('/transfer', (req, res) => send(res, 200, 'application/json', transfer));
  router.get('/loop', (req, res) => {
    const n = intParam(req, 'n', 1000000, 0, 10000000);
    if (n === undefined) return send(res, 400, 'text/plain', 'bad n');
    let c = 0;
    for (let i = 0; i < n; i++) if ((3 * i + 1) % 7 === 0) c++;
    text(res, String(c));
  });
  router.get('/products', (req, res, next) => {
    products().then((rows) => send(res, 200, 'application/json', JSON.stringify(rows)), next);
  });
  router.get(/^\/documents\/(\d+)$/, (req, res, next) => {
    documents(Number(req.params[0])).then((doc) => {
      if (doc === null) return send(res, 404, 'text/plain', 'Not Found');
      send(res, 200, 'application/json', JSON.stringify(doc));
    }, next);
  });

  const app = connect();
  app.use(router);
  // Last middlewares: 404 for anything no route took, 500 for errors passed to next (both text/plain;
  // Connect's own final handler would answer text/html).
  app.use((req, res) => send(res, 404, 'text/plain', 'Not Found'));
  app.use((err, req, res, next) => send(res, 500, 'text/plain', String(err)));
  http.createServer(app).listen(PORT, HOST);
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

// Returns an async function finding one document by _id (null when absent), through the MongoDB driver.
function openDocuments(url) {
  if (!url) return async () => { throw new Error('DOCSTORE_URL not set'); };
  const { MongoClient } = require('mongodb');
  // The driver connects lazily on the first operation and keeps its own pool (default size 100).
  const coll = new MongoClient(url).db('bakeoff').collection('documents');
  return (id) => coll.findOne({ _id: id }, { projection: { _id: 0 } });
}
