// Installs the peers' pinned packages into bench/peers/node_modules on first use (or when
// package.json's pins changed): `npm install --prefix bench/peers --no-audit --no-fund`, from the npm
// registry, the versions of package-lock.json. They never weigh on the project's own install, its
// tests or its start: only bench/run.mjs imports this, and only the peer servers load them.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PEERS_DIR = dirname(fileURLToPath(import.meta.url));
const INSTALL_TIMEOUT_MS = 10 * 60_000;

/** The pinned packages that are missing or at another version than package.json pins. */
function missing() {
  const { dependencies } = JSON.parse(readFileSync(join(PEERS_DIR, 'package.json'), 'utf8'));
  return Object.entries(dependencies).filter(([name, version]) => {
    try {
      return (
        JSON.parse(readFileSync(join(PEERS_DIR, 'node_modules', name, 'package.json'), 'utf8')).version !==
        version
      );
    } catch {
      return true;
    }
  });
}

/** Runs npm install in bench/peers when a pinned package is missing; throws when it fails. */
export function ensurePeersInstalled(log) {
  const wanted = missing();
  if (wanted.length === 0) return;
  log(
    `installing the peers' packages into bench/peers/node_modules (${wanted.map(([n, v]) => `${n}@${v}`).join(', ')})`,
  );
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = spawnSync(npm, ['install', '--prefix', PEERS_DIR, '--no-audit', '--no-fund'], {
    stdio: ['ignore', process.stderr, process.stderr],
    timeout: INSTALL_TIMEOUT_MS,
  });
  if (r.error) throw new Error(`npm install --prefix bench/peers: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`npm install --prefix bench/peers exited with ${r.status ?? r.signal}`);
  const still = missing();
  if (still.length > 0)
    throw new Error(`npm install --prefix bench/peers left out ${still.map(([n]) => n).join(', ')}`);
}
