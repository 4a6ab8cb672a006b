// Issue 40: uploading 20 MiB must not block the event loop. Starts dist/main.js (embedded PostgreSQL
// under a temporary DATA_DIR), uploads a 20 MiB PNG a few times (raw body, then multipart), and
// measures what the server's event loop went through meanwhile, two ways: the server's own
// nodejs_eventloop_lag_max_seconds (prom-client's histogram, reset by each /metrics scrape, scraped
// right before and right after each upload) and, from outside, the latency of GET /health/live sent
// every 5 ms during the upload. Not a test: it prints figures (and writes bench/results/upload.json).
//   npm run -s build && node bench/upload.mjs [--uploads N]
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import { children, percentile, startReplica } from './replicas.mjs';

const UPLOADS = Number(process.argv.find((a) => a.startsWith('--uploads='))?.split('=')[1] ?? 4);
const SIZE = 20 * 1024 * 1024;

/** A real PNG (1×1) of `size` bytes: a private ancillary chunk of random bytes makes up the rest. */
function bigPng(size) {
  const chunk = (type, data) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const head = Buffer.alloc(4);
    head.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([head, body, crc]);
  };
  const ihdr = Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0]);
  const parts = [
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(Buffer.from([0, 1, 2, 3]))),
    chunk('IEND', Buffer.alloc(0)),
  ];
  const fixed = parts.reduce((n, p) => n + p.length, 0) + 12;
  parts.splice(2, 0, chunk('bnCH', randomBytes(size - fixed)));
  return Buffer.concat(parts);
}

async function lagMaxMs(url) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('nodejs_eventloop_lag_max_seconds'));
  return line ? Number(line.split(' ')[1]) * 1000 : NaN;
}

async function main() {
  const dataDir = mkdtempSync(join(tmpdir(), 'loopwright-bench-upload-'));
  chmodSync(dataDir, 0o755); // the embedded PostgreSQL's user enters it when this runs as root
  const server = await startReplica('upload', {
    DATA_DIR: dataDir,
    OPENAI_API_KEY: 'bench',
    LOG_LEVEL: 'warn',
    FILE_MAX_BYTES: String(SIZE),
  });
  const results = [];
  try {
    // The floor: the same measures for as long, with no upload (on a shared machine it is not zero).
    for (let i = 0; i < UPLOADS + 1; i++) {
      const baseline = i === 0;
      const bytes = baseline ? null : bigPng(SIZE);
      const multipart = i % 2 === 0;
      await lagMaxMs(server.url); // resets the server's histogram
      const pings = [];
      let uploading = true;
      const pinger = (async () => {
        while (uploading) {
          const t0 = performance.now();
          await fetch(`${server.url}/health/live`).then((r) => r.arrayBuffer());
          pings.push(performance.now() - t0);
          await new Promise((r) => setTimeout(r, 5));
        }
      })();
      const t0 = performance.now();
      if (baseline) {
        await new Promise((r) => setTimeout(r, 1500));
      } else {
        let body = bytes;
        const headers = {};
        if (multipart) {
          body = new FormData();
          body.append('file', new Blob([bytes], { type: 'image/png' }), 'big.png');
        } else headers['content-type'] = 'image/png';
        const res = await fetch(`${server.url}/v1/files?name=big.png`, { method: 'POST', headers, body });
        const answer = await res.json();
        if (res.status !== 201) throw new Error(`upload ${i}: ${res.status} ${JSON.stringify(answer)}`);
      }
      const uploadMs = performance.now() - t0;
      uploading = false;
      await pinger;
      const lag = await lagMaxMs(server.url);
      results.push({
        how: baseline ? 'none (floor)' : multipart ? 'multipart' : 'raw',
        uploadMs: Math.round(uploadMs),
        serverLoopLagMaxMs: Math.round(lag * 10) / 10,
        pings: pings.length,
        pingP50Ms: Math.round(percentile(pings, 50) * 10) / 10,
        pingMaxMs: Math.round(Math.max(...pings) * 10) / 10,
      });
    }
  } finally {
    for (const child of children) child.kill('SIGTERM');
  }
  console.table(results);
  mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
  writeFileSync(
    new URL('./results/upload.json', import.meta.url),
    JSON.stringify({ size: SIZE, results }, null, 2),
  );
}

main().catch((error) => {
  for (const child of children) child.kill('SIGKILL');
  console.error(error);
  process.exit(1);
});
