// `npm run dev`: builds when needed, serves `node dist/main.js`, and on every change under src/ or
// web/ (or the build's configuration) rebuilds and restarts the server. A build that fails leaves
// the running server as it was and says why; the next change tries again.
import { spawn } from 'node:child_process';
import { watch } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildIfChanged } from './build-if-changed.mjs';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..');
/** Editors write a file in bursts (save, format, rename): one rebuild after the burst. */
const SETTLE_MS = 300;

let server = null;
let stopping = false;

function start() {
  const child = spawn(process.execPath, [join(root, 'dist', 'main.js')], {
    cwd: root,
    stdio: 'inherit',
    // A restart should not wait long for runs (they are taken over by the next process anyway).
    env: { SHUTDOWN_GRACE_MS: '1000', ...process.env },
  });
  server = child;
  child.once('exit', (code) => {
    // Stopped on purpose (a restart, Ctrl-C) it is no longer `server`.
    if (server === child) console.error(`[dev] the server exited (${code}); waiting for a change`);
  });
}

function stop() {
  const s = server;
  server = null;
  if (s === null || s.exitCode !== null || s.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    s.once('exit', done);
    s.kill('SIGTERM');
  });
}

let timer = null;
let rebuilding = false;
let again = false;

async function rebuild() {
  if (rebuilding) {
    again = true;
    return;
  }
  rebuilding = true;
  try {
    let built = false;
    try {
      built = buildIfChanged();
    } catch (err) {
      console.error(
        `[dev] ${err instanceof Error ? err.message : String(err)}: the server keeps running the last build`,
      );
    }
    if (built || server === null) {
      console.error('[dev] restarting');
      await stop();
      if (!stopping) start();
    }
  } finally {
    rebuilding = false;
    if (again) {
      again = false;
      void rebuild();
    }
  }
}

for (const path of ['src', 'web']) {
  watch(join(root, path), { recursive: true }, () => {
    clearTimeout(timer);
    timer = setTimeout(() => void rebuild(), SETTLE_MS);
  });
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    stopping = true;
    await stop();
    process.exit(0);
  });
}

try {
  buildIfChanged();
} catch (err) {
  console.error(
    `[dev] ${err instanceof Error ? err.message : String(err)}; fix it and save: dev mode rebuilds on change`,
  );
}
start();
console.error('[dev] watching src/ and web/: a change rebuilds and restarts the server');
