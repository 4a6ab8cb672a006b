// Bundles the playground (web/) into dist/web, which src/playground serves at GET / and /assets/*.
// Minified, no source maps: the page ships as two small files beside its HTML.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'web');
mkdirSync(join(out, 'assets'), { recursive: true });
await build({
  entryPoints: [join(root, 'web', 'src', 'main.tsx')],
  outfile: join(out, 'assets', 'app.js'),
  bundle: true,
  minify: true,
  sourcemap: false,
  format: 'esm',
  target: 'es2022',
  jsx: 'automatic',
  define: { 'process.env.NODE_ENV': '"production"' },
  legalComments: 'none',
  logLevel: 'warning',
});
copyFileSync(join(root, 'web', 'index.html'), join(out, 'index.html'));
copyFileSync(join(root, 'web', 'app.css'), join(out, 'assets', 'app.css'));
