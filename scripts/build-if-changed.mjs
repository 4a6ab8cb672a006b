// Builds (nest build, then the playground) only when the sources changed since the last build:
// a hash of every file the build reads is kept in dist/.build-stamp. `npm start` runs this first,
// so a second start serves at once; `npm run build` (--force) always builds.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..');
const STAMP = join(root, 'dist', '.build-stamp');
/** What the build reads: the sources, the page, and the files that configure both. */
const INPUTS = [
  'src',
  'web',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'nest-cli.json',
  'scripts/build-web.mjs',
];
/** What a build leaves; missing, it builds whatever the stamp says. */
const OUTPUTS = ['dist/main.js', 'dist/web/index.html', 'dist/web/assets/app.js'];

export function sourcesHash() {
  const hash = createHash('sha256');
  const visit = (path) => {
    if (!existsSync(path)) return;
    if (statSync(path).isDirectory()) {
      for (const name of readdirSync(path).sort()) {
        if (name !== 'node_modules' && !name.startsWith('.')) visit(join(path, name));
      }
      return;
    }
    hash.update(relative(root, path)).update('\0').update(readFileSync(path)).update('\0');
  };
  for (const input of INPUTS) visit(join(root, input));
  return hash.digest('hex');
}

/** Builds when needed; answers whether it built. Throws when the build fails. */
export function buildIfChanged({ force = false } = {}) {
  const hash = sourcesHash();
  const built = OUTPUTS.every((f) => existsSync(join(root, f)));
  if (!force && built && existsSync(STAMP) && readFileSync(STAMP, 'utf8').trim() === hash) return false;
  for (const [command, args] of [
    ['nest build', [join(root, 'node_modules', '@nestjs', 'cli', 'bin', 'nest.js'), 'build']],
    ['the playground build', [join(root, 'scripts', 'build-web.mjs')]],
  ]) {
    const run = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
    if (run.status !== 0) throw new Error(`${command} failed`);
  }
  writeFileSync(STAMP, `${hash}\n`);
  return true;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    const started = Date.now();
    if (buildIfChanged({ force: process.argv.includes('--force') }))
      console.error(`built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } catch (err) {
    console.error(String(err instanceof Error ? err.message : err));
    process.exit(1);
  }
}
