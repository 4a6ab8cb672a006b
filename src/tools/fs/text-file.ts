import type { OpenedFile } from '../path-guard';
import { ToolError } from '../tool';

/** Files larger than this are not edited in memory; a model cannot usefully review such a change anyway. */
export const EDIT_MAX_BYTES = 10 * 1024 * 1024;

export interface TextFile {
  text: string;
  bytes: Buffer;
  /** Permission bits, kept when the file is rewritten. */
  mode: number;
}

/** Git's heuristic: a NUL byte near the start means binary. */
export function looksBinary(buf: Buffer): boolean {
  return buf.subarray(0, 8000).includes(0);
}

/**
 * Reads a file a write tool is about to change (opened by the path guard, closed here), refusing
 * what cannot round-trip as UTF-8 text.
 */
export async function readTextFile(
  file: OpenedFile,
  displayPath: string,
  maxBytes = EDIT_MAX_BYTES,
): Promise<TextFile> {
  try {
    return await readOpenText(file, displayPath, maxBytes);
  } finally {
    await file.handle.close();
  }
}

async function readOpenText(file: OpenedFile, displayPath: string, maxBytes: number): Promise<TextFile> {
  const stats = file.stats;
  if (stats.isDirectory()) {
    throw new ToolError('INVALID_ARGUMENTS', `${displayPath}: is a folder, not a file.`);
  }
  if (stats.size > maxBytes) {
    throw new ToolError(
      'SIZE_LIMIT',
      `${displayPath}: is ${stats.size} bytes; files above ${maxBytes} bytes cannot be edited.`,
    );
  }
  const bytes = await file.handle.readFile();
  if (looksBinary(bytes)) {
    throw new ToolError(
      'INVALID_ARGUMENTS',
      `${displayPath}: is a binary file and cannot be edited as text.`,
    );
  }
  const text = bytes.toString('utf8');
  // Editing a file that is not UTF-8 would silently replace its bytes with U+FFFD.
  if (!Buffer.from(text, 'utf8').equals(bytes)) {
    throw new ToolError(
      'INVALID_ARGUMENTS',
      `${displayPath}: is not valid UTF-8 text and cannot be edited safely.`,
    );
  }
  return { text, bytes, mode: stats.mode & 0o7777 };
}
