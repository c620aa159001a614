// A stand-in dev server: serves one page on 127.0.0.1:4173 and, as dev
// servers' watchers and helpers do, starts a detached child of its own.
const http = require('node:http');
const { spawn } = require('node:child_process');

spawn('sleep', ['3143.26'], { detached: true, stdio: 'ignore' }).unref();
http.createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/html' });
  res.end('<!doctype html><title>tether example</title><p>served from a tether session</p>');
}).listen(4173, '127.0.0.1');
