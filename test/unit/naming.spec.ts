import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const SRC = join(__dirname, '..', '..', 'src');

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(path);
    else if (entry.name.endsWith('.ts')) yield path;
  }
}

/** `RunAccounting` → `run-accounting`, `AgUiRuns` → `ag-ui-runs`. */
const kebab = (name: string) =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1-$2')
    .toLowerCase();

/** docs/architecture.md's naming convention for injectables, held for every one of them. */
describe('the names of injectables', () => {
  const injectables = [...sourceFiles(SRC)].flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(/@Injectable\([^)]*\)\s*export class (\w+)/g)].map((m) => ({
      file: relative(SRC, file),
      name: m[1],
    })),
  );

  it('finds the injectables', () => {
    expect(injectables.length).toBeGreaterThan(50);
  });

  it('names each a noun without a Service suffix, in <kebab>.service.ts (guards, pipes and tools by their kind)', () => {
    const wrong = injectables.filter(({ file, name }) => {
      const base = file.split('/').at(-1)!;
      if (/\.(guard|pipe|tool)\.ts$/.test(base)) return false;
      return name.endsWith('Service') || base !== `${kebab(name)}.service.ts`;
    });
    expect(wrong).toEqual([]);
  });
});
