import { Worker } from 'node:worker_threads';

export interface SearchRequest {
  files: { path: string; absPath: string }[];
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
 * TypeScript toolchain. Files are opened without following a link and only read when regular.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const { files, source, flags, maxMatches, maxFileBytes, maxLineChars } = workerData;
const pattern = new RegExp(source, flags);
const outcome = { matches: [], capped: false, filesSearched: 0, skippedBinary: 0, skippedLarge: 0 };
const openFlags = fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW || 0) | (fs.constants.O_NONBLOCK || 0);
function readRegular(absPath) {
  let fd;
  try {
    fd = fs.openSync(absPath, openFlags);
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
  const buf = readRegular(file.absPath);
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
parentPort.postMessage(outcome);
`;

export function searchInWorker(request: SearchRequest, signal: AbortSignal): Promise<SearchOutcome> {
  signal.throwIfAborted();
  return new Promise<SearchOutcome>((resolve, reject) => {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: request,
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
