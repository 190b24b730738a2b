// The {{stack}} stack: node:cluster with WORKERS worker processes, each a node:http server
// sharing $HOST:$PORT, answering the hello scenario. Replace it with the framework you want
// to measure (Fastify, Express...).
'use strict';

const cluster = require('node:cluster');
const http = require('node:http');

// HOST is the address to bind: 127.0.0.1, or the server host's own address when the lab places
// the server on a host of its own. Never 0.0.0.0: a benchmark never opens a port to the network.
const host = process.env.HOST || '127.0.0.1';
const port = Number(process.env.PORT);
const workers = Math.max(1, Number(process.env.WORKERS || 1));

if (cluster.isPrimary) {
  for (let i = 0; i < workers; i++) cluster.fork();
  // A worker that dies is not replaced: the lab notices a server that lost capacity.
  process.on('SIGTERM', () => {
    for (const w of Object.values(cluster.workers)) w.kill('SIGTERM');
    process.exit(0);
  });
  console.log(`{{stack}} listening on ${host}:${port} with ${workers} workers`);
} else {
  http
    .createServer((req, res) => {
      if (req.method === 'GET' && req.url === '/') {
        res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': 12 });
        res.end('Hello World!');
      } else {
        res.writeHead(404, { 'Content-Type': 'text/plain', 'Content-Length': 9 });
        res.end('not found');
      }
    })
    .listen(port, host);
}
