import { copyFileSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import picomatch from 'picomatch';

/** One instruction of a Dockerfile: its keyword (upper case) and the rest of the line. */
export interface Instruction {
  op: string;
  args: string;
}

export interface Stage {
  /** The FROM line. */
  from: string;
  /** The stage's name (`AS build`), or null. */
  name: string | null;
  instructions: Instruction[];
}

/** The Dockerfile's stages and instructions (continuation lines joined, comments dropped). */
export function parseDockerfile(text: string): Stage[] {
  const lines = text
    .replace(/\\\r?\n/g, ' ')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const stages: Stage[] = [];
  for (const line of lines) {
    const [, op = '', args = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    if (op.toUpperCase() === 'FROM') {
      stages.push({ from: line, name: /\sAS\s+(\S+)\s*$/i.exec(line)?.[1] ?? null, instructions: [] });
    } else {
      stages.at(-1)?.instructions.push({ op: op.toUpperCase(), args });
    }
  }
  return stages;
}

/** A COPY's flags (`--from=build`, `--chown=…`), sources and destination. */
export function parseCopy(args: string): { flags: Record<string, string>; sources: string[]; dest: string } {
  const words = args.trim().startsWith('[')
    ? (JSON.parse(args.replace(/^((?:--\S+\s+)*)/, '')) as string[])
    : args.split(/\s+/).filter((w) => !w.startsWith('--'));
  const flags: Record<string, string> = {};
  for (const [, name, value] of args.matchAll(/--([a-z-]+)=(\S+)/g)) flags[name] = value;
  return { flags, sources: words.slice(0, -1), dest: words.at(-1)! };
}

/**
 * Docker's .dockerignore rules: each pattern is a path relative to the context's root (`*`, `?`,
 * `**`), a path is left out when the last pattern matching it or one of its parent folders is not
 * an exception (`!`).
 */
export function dockerignore(text: string): (path: string) => boolean {
  const rules = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const exception = line.startsWith('!');
      const pattern = posix.normalize((exception ? line.slice(1) : line).trim()).replace(/^\/+|\/+$/g, '');
      return { exception, matches: picomatch(pattern, { dot: true }) };
    });
  return (path) => {
    const parts = path.split('/');
    const candidates = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
    let excluded = false;
    for (const rule of rules) {
      if (candidates.some((c) => rule.matches(c))) excluded = !rule.exception;
    }
    return excluded;
  };
}

/** The files of the build context under `root` (context-relative, `/`-separated), .dockerignore applied. */
export function contextFiles(root: string): string[] {
  let ignoreText = '';
  try {
    ignoreText = readFileSync(join(root, '.dockerignore'), 'utf8');
  } catch {
    // No .dockerignore: everything is in the context.
  }
  const ignored = dockerignore(ignoreText);
  const files: string[] = [];
  const walk = (rel: string) => {
    for (const entry of readdirSync(join(root, rel), { withFileTypes: true })) {
      const path = rel === '' ? entry.name : `${rel}/${entry.name}`;
      // A folder left out whole is not walked (no exception pattern here reaches inside one).
      if (entry.isDirectory()) {
        if (!ignored(path)) walk(path);
      } else if (!ignored(path)) files.push(path);
    }
  };
  walk('');
  return files;
}

/**
 * Does what `COPY <sources> <dest>` does from the build context into `workdir`: a file is copied
 * to `dest` (or into it, when it ends with `/` or several sources are given), a folder's contents
 * into `dest`. Only files in `context` (the context after .dockerignore) are copied.
 */
export function copyFromContext(
  root: string,
  context: readonly string[],
  sources: readonly string[],
  dest: string,
  workdir: string,
): void {
  const target = dest.startsWith('/') ? dest : join(workdir, dest);
  const intoFolder = dest.endsWith('/') || sources.length > 1;
  for (const source of sources) {
    const src = posix.normalize(source).replace(/^\.\/|\/$/g, '');
    const isFolder =
      src === '.' || statSync(join(root, src), { throwIfNoEntry: false })?.isDirectory() === true;
    const files = isFolder
      ? context.filter((f) => src === '.' || f.startsWith(`${src}/`))
      : context.filter((f) => f === src);
    if (files.length === 0) throw new Error(`COPY ${source}: nothing in the build context matches`);
    for (const file of files) {
      const to = isFolder
        ? join(target, src === '.' ? file : file.slice(src.length + 1))
        : intoFolder
          ? join(target, posix.basename(file))
          : target;
      mkdirSync(dirname(to), { recursive: true });
      copyFileSync(join(root, file), to);
    }
  }
}
