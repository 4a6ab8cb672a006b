import { Worker } from 'node:worker_threads';
import { assertHeldDirsAvailable } from '../fs/held-dir';

export interface SearchRequest {
  /** The workspace's real path. */
  root: string;
  /** `real`: the file's real workspace-relative path (`/`-separated), opened from the held root. */
  files: { path: string; real: string }[];
  /** RegExp source and flags, already checked to compile. */
  source: string;
  flags: string;
  maxMatches: number;
  maxFileBytes: number;
  maxLineChars: number;
}

export interface SearchMatch {
  path: string;
  line: number;
  text: string;
}

export interface SearchOutcome {
  matches: SearchMatch[];
  capped: boolean;
  filesSearched: number;
  skippedBinary: number;
  skippedLarge: number;
}

/**
 * Runs in a worker thread because the pattern comes from a model: a catastrophic regular expression
 * would otherwise freeze the whole server's event loop, and only a separate thread can be stopped
 * mid-match (terminate on timeout or cancel). Plain JavaScript, as it is evaluated without the
 * TypeScript toolchain. Files are opened one name at a time from the held root, as the other file
 * tools do (fs/held-dir.ts): a folder swapped for a link since the walk is not followed and its
 * files are skipped; a file is opened without following a link and only read when regular. A worker
 * stopped mid-search leaves nothing open: Node closes the descriptors a worker opened through fs
 * when it exits (Worker's trackUnmanagedFds, on by default).
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const { root, files, source, flags, maxMatches, maxFileBytes, maxLineChars } = workerData;
const pattern = new RegExp(source, flags);
const outcome = { matches: [], capped: false, filesSearched: 0, skippedBinary: 0, skippedLarge: 0 };
const C = fs.constants;
const DIR_FLAGS = C.O_RDONLY | C.O_DIRECTORY | C.O_NOFOLLOW;
const FILE_FLAGS = C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK;
/** Folders held open from the root down; names[i] is the name of held[i + 1]. */
const held = [];
const names = [];
function letGo() {
  fs.closeSync(held.pop());
}
function folderOf(parts) {
  let common = 0;
  while (common < names.length && common < parts.length && names[common] === parts[common]) common++;
  while (names.length > common) { letGo(); names.pop(); }
  for (let i = common; i < parts.length; i++) {
    held.push(fs.openSync('/proc/self/fd/' + held[held.length - 1] + '/' + parts[i], DIR_FLAGS));
    names.push(parts[i]);
  }
  return held[held.length - 1];
}
held.push(fs.openSync(root, C.O_RDONLY | C.O_DIRECTORY));
function readRegular(real) {
  const parts = real.split('/');
  const name = parts.pop();
  let fd;
  try {
    fd = fs.openSync('/proc/self/fd/' + folderOf(parts) + '/' + name, FILE_FLAGS);
    const stats = fs.fstatSync(fd);
    if (!stats.isFile()) return null;
    if (stats.size > maxFileBytes) { outcome.skippedLarge++; return null; }
    return fs.readFileSync(fd);
  } catch {
    return null;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
for (const file of files) {
  const buf = readRegular(file.real);
  if (buf === null) continue;
  if (buf.subarray(0, 8000).includes(0)) { outcome.skippedBinary++; continue; }
  outcome.filesSearched++;
  const lines = buf.toString('utf8').split('\\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].endsWith('\\r') ? lines[i].slice(0, -1) : lines[i];
    if (!pattern.test(line)) continue;
    const text = line.length > maxLineChars ? line.slice(0, maxLineChars) + ' …' : line;
    outcome.matches.push({ path: file.path, line: i + 1, text });
    if (outcome.matches.length >= maxMatches) { outcome.capped = true; break; }
  }
  if (outcome.capped) break;
}
while (held.length > 0) letGo();
parentPort.postMessage(outcome);
`;

export function searchInWorker(request: SearchRequest, signal: AbortSignal): Promise<SearchOutcome> {
  signal.throwIfAborted();
  assertHeldDirsAvailable();
  return new Promise<SearchOutcome>((resolve, reject) => {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: request,
      trackUnmanagedFds: true,
      resourceLimits: { maxOldGenerationSizeMb: 512 },
    });
    let settled = false;
    const finish = (action: () => void): void => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      action();
      void worker.terminate();
    };
    const onAbort = (): void => finish(() => reject(abortError(signal)));
    signal.addEventListener('abort', onAbort, { once: true });
    worker.once('message', (outcome: SearchOutcome) => finish(() => resolve(outcome)));
    worker.once('error', (err: unknown) =>
      finish(() => reject(err instanceof Error ? err : new Error(String(err)))),
    );
    worker.once('exit', (code) =>
      finish(() => reject(new Error(`the search worker stopped (exit code ${code})`))),
    );
  });
}

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new Error('aborted');
}
