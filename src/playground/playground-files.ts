import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface PlaygroundFile {
  readonly type: string;
  readonly content: Buffer;
}

// Both src/playground (ts-jest) and dist/playground (node dist/main.js) sit two levels under the
// project root, so this is the bundle `npm run build` writes in either case.
export const PLAYGROUND_DIR = join(__dirname, '..', '..', 'dist', 'web');

// A fixed list served by name, so no request path ever reaches the file system.
const ASSETS: Readonly<Record<string, string>> = {
  'app.js': 'application/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
};

/** The built page and its assets, read once; null when the page was not built (`npm run build`). */
export function loadPlaygroundFiles(dir = PLAYGROUND_DIR): {
  index: PlaygroundFile;
  assets: ReadonlyMap<string, PlaygroundFile>;
} | null {
  try {
    const index = { type: 'text/html; charset=utf-8', content: readFileSync(join(dir, 'index.html')) };
    const assets = new Map<string, PlaygroundFile>();
    for (const [name, type] of Object.entries(ASSETS)) {
      assets.set(name, { type, content: readFileSync(join(dir, 'assets', name)) });
    }
    return { index, assets };
  } catch {
    return null;
  }
}
