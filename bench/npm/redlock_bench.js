// redlock_bench.js PORT OPS -- the npm anchor of row 3 of `make bench`:
// redlock (4.x, the registry's latest) over one ioredis client doing
// acquire+release on one key, sequentially, on the same loopback server.
// Prints lifecycles per second. Bench only: never a dependency of the library.
'use strict';
const Redis = require('ioredis');
const Redlock = require('redlock');

const port = Number(process.argv[2]);
const ops = Number(process.argv[3] || 5000);
const client = new Redis({ host: '127.0.0.1', port, lazyConnect: false, enableOfflineQueue: true });
const redlock = new Redlock([client], { retryCount: 0, driftFactor: 0.01 });

async function cycle() {
  const lock = await redlock.lock('bench-node', 30000);
  await lock.unlock();
}

(async () => {
  for (let i = 0; i < Math.ceil(ops / 10); i++) await cycle();   // warm up (JIT, script cache)
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < ops; i++) await cycle();
  const dt = Number(process.hrtime.bigint() - t0) / 1e9;
  console.log((ops / dt).toFixed(1));
  client.disconnect();
})().catch((e) => { console.error('redlock_bench:', e && e.message ? e.message : e); client.disconnect(); process.exit(1); });
