// A stand-in for a partner's API (node:http, local): it answers 429 with
// Retry-After when a call would make more than `limit` calls in the last
// `windowMs` (a sliding log of the accepted calls' arrival times), else 200.
// The example's paced client must never see its 429.

import http from 'node:http';

export function startPartnerApi({ limit = 100, windowMs = 60_000, now = () => performance.now() } = {}) {
  const accepted = []; // arrival times of the calls it answered 200, oldest first
  const stats = { ok: 0, tooMany: 0, peak: 0 };
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const t = now();
      while (accepted.length && accepted[0] <= t - windowMs) accepted.shift();
      if (accepted.length >= limit) {
        stats.tooMany++;
        const retryS = Math.max(1, Math.ceil((accepted[0] + windowMs - t) / 1000));
        res.writeHead(429, { 'Content-Type': 'application/json', 'Retry-After': String(retryS) });
        res.end(JSON.stringify({ error: 'too_many_requests' }));
        return;
      }
      accepted.push(t);
      stats.ok++;
      stats.peak = Math.max(stats.peak, accepted.length);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ ok: true, path: req.url }));
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({
        port,
        stats,
        close: () => new Promise((done) => { server.closeAllConnections?.(); server.close(() => done()); }),
      });
    });
  });
}

// One call to the partner: resolves to the HTTP status.
export function callPartner(port, path) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', reject);
    req.end();
  });
}
