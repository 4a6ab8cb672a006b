import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import ts from 'typescript';

/**
 * No import circle in src/, type-only imports included: a circle means a type sits on the wrong side
 * of a seam.
 */
const SRC = join(__dirname, '..', '..', 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The files of src/ that `file` imports or re-exports from, by relative path. */
function importsOf(file: string, known: ReadonlySet<string>): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, false);
  return importedFiles
    .filter((i) => i.fileName.startsWith('.'))
    .map((i) => normalize(join(dirname(file), i.fileName)))
    .flatMap((target) => [`${target}.ts`, join(target, 'index.ts')].filter((f) => known.has(f)).slice(0, 1));
}

/** Every circle, as the files on it in import order (one per strongly connected set: Tarjan). */
function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const set: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        set.push(w);
      } while (w !== v);
      if (set.length > 1) found.push(set);
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

it('src/ has no import circle', () => {
  const files = sourceFiles(SRC);
  const known = new Set(files);
  const graph = new Map(files.map((f) => [f, importsOf(f, known)]));
  const named = circles(graph).map((set) => set.map((f) => relative(SRC, f)).sort());
  expect(named).toEqual([]);
});
