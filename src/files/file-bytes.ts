import { createHash } from 'node:crypto';
import { PayloadTooLargeException, UnsupportedMediaTypeException } from '@nestjs/common';
import { DomainError, ErrorCode } from '../common/domain-error';
import { IMAGE_TYPES, PDF_TYPE, SNIFF_BYTES, imageDimensions, sniffedType } from '../common/media-types';

/** The types a file may have ("Attachments"): these images, PDF, and text. */
export { IMAGE_TYPES, PDF_TYPE };

/** What the bytes of an upload are, as far as the server checked them. */
export interface FileKind {
  mediaType: string;
  /** An image's pixels. */
  width: number | null;
  height: number | null;
}

/** Bytes read within a bound: the chunks as they came, their digest (computed as they arrived). */
export interface ReadBytes {
  chunks: Buffer[];
  size: number;
  sha256: string;
}

/** How many leading bytes an image's dimensions are looked for in (a JPEG's come after its EXIF). */
const IMAGE_HEAD_BYTES = 1024 * 1024;

/**
 * Reads an upload's chunks, hashing each as it arrives, and stops with a 413 the moment the total
 * passes `maxBytes` — nothing beyond the bound is kept. The chunks are kept as they came: nothing
 * here works on the whole at once (a 20 MiB copy holds the event loop for tens of milliseconds).
 */
export async function readBounded(
  chunks: AsyncIterable<Buffer | Uint8Array> | Iterable<Buffer | Uint8Array>,
  maxBytes: number,
): Promise<ReadBytes> {
  const hash = createHash('sha256');
  const kept: Buffer[] = [];
  let size = 0;
  for await (const chunk of chunks) {
    size += chunk.length;
    if (size > maxBytes) throw fileTooLarge(maxBytes);
    const part = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
    hash.update(part);
    kept.push(part);
  }
  return { chunks: kept, size, sha256: hash.digest('hex') };
}

/** The first `n` bytes of chunks (fewer if there are fewer). */
export function headOf(chunks: readonly Buffer[], n: number): Buffer {
  const parts: Buffer[] = [];
  let have = 0;
  for (const chunk of chunks) {
    if (have >= n) break;
    parts.push(chunk.subarray(0, n - have));
    have += Math.min(chunk.length, n - have);
  }
  return parts.length === 1 ? parts[0] : Buffer.concat(parts, have);
}

/** Chunks regrouped into pieces of `size` bytes (the last one shorter), one copy of one piece at a time. */
export function* piecesOf(chunks: readonly Buffer[], size: number): Generator<Buffer> {
  let parts: Buffer[] = [];
  let have = 0;
  for (let chunk of chunks) {
    while (chunk.length > 0) {
      const take = Math.min(chunk.length, size - have);
      parts.push(chunk.subarray(0, take));
      have += take;
      chunk = chunk.subarray(take);
      if (have === size) {
        yield parts.length === 1 ? parts[0] : Buffer.concat(parts, have);
        parts = [];
        have = 0;
      }
    }
  }
  if (have > 0) yield parts.length === 1 ? parts[0] : Buffer.concat(parts, have);
}

export function fileTooLarge(maxBytes: number): PayloadTooLargeException {
  return new PayloadTooLargeException(
    `The file is larger than the limit of ${maxBytes} bytes (FILE_MAX_BYTES)`,
  );
}

/** `type/subtype` of a Content-Type header, lowercased, without parameters; null for none. */
export function bareMediaType(header: string | undefined | null): string | null {
  const type = header?.split(';', 1)[0].trim().toLowerCase();
  return type ? type : null;
}

/** Types a client sends when it does not know better: the bytes alone decide then. */
const GENERIC_TYPES: ReadonlySet<string> = new Set(['application/octet-stream', 'binary/octet-stream']);

function isTextType(type: string): boolean {
  return type.startsWith('text/') || type === 'application/json';
}

/**
 * What an upload is, judged by its bytes (the declared type only says which text they claim to be):
 * an accepted image that decodes, a PDF, or valid UTF-8 text without NULs (JSON that parses). A
 * body that is not what its declared type says is a 400; a type not accepted a 415.
 */
export async function classifyBytes(read: ReadBytes, declared: string | null): Promise<FileKind> {
  const sniffed = await sniffedType(headOf(read.chunks, SNIFF_BYTES));
  const claimed = declared === null || GENERIC_TYPES.has(declared) ? null : declared;
  if (sniffed !== null && (IMAGE_TYPES.has(sniffed) || sniffed === PDF_TYPE)) {
    if (claimed !== null && claimed !== sniffed) {
      throw invalid(`The file's bytes are ${sniffed}, not ${claimed}`);
    }
    return sniffed === PDF_TYPE
      ? { mediaType: PDF_TYPE, width: null, height: null }
      : decodedImage(read, sniffed);
  }
  if (claimed !== null && (IMAGE_TYPES.has(claimed) || claimed === PDF_TYPE)) {
    throw invalid(`The file's bytes are not ${claimed} (they do not decode)`);
  }
  if (sniffed !== null) throw unsupported(sniffed);
  if (claimed === null || !isTextType(claimed)) throw unsupported(claimed ?? 'not a type it accepts');
  const text = decodedText(read.chunks);
  if (text === null) throw invalid(`The file is not ${claimed}: text must be UTF-8 without NUL characters`);
  if (claimed === 'application/json') {
    try {
      JSON.parse(text);
    } catch {
      throw invalid('The file is not application/json: it does not parse');
    }
  }
  return { mediaType: claimed, width: null, height: null };
}

/** The text of UTF-8 chunks, decoded chunk by chunk; null when they are not UTF-8 or hold a NUL. */
function decodedText(chunks: readonly Buffer[]): string | null {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const parts: string[] = [];
  try {
    for (const chunk of chunks) {
      if (chunk.includes(0)) return null;
      parts.push(decoder.decode(chunk, { stream: true }));
    }
    parts.push(decoder.decode());
  } catch {
    return null;
  }
  return parts.join('');
}

/** An image's dimensions, from its first bytes (all of them when its header lies further in). */
function decodedImage(read: ReadBytes, mediaType: string): FileKind {
  const head = headOf(read.chunks, IMAGE_HEAD_BYTES);
  const size =
    imageDimensions(head) ?? (head.length < read.size ? imageDimensions(Buffer.concat(read.chunks)) : null);
  if (size === null) throw invalid(`The file's bytes are not a ${mediaType} that decodes`);
  return { mediaType, ...size };
}

function invalid(message: string): DomainError {
  return new DomainError(ErrorCode.InvalidRequest, message);
}

function unsupported(type: string): UnsupportedMediaTypeException {
  return new UnsupportedMediaTypeException(
    `Unsupported file type (${type.slice(0, 100)}): accepted are image/png, image/jpeg, image/gif, image/webp, application/pdf, text/* and application/json`,
  );
}

/** The extension a default file name takes for a type. */
export function extensionFor(mediaType: string): string {
  const known: Record<string, string> = {
    'image/png': 'png',
    'image/jpeg': 'jpg',
    'image/gif': 'gif',
    'image/webp': 'webp',
    'application/pdf': 'pdf',
    'application/json': 'json',
    'text/plain': 'txt',
    'text/markdown': 'md',
    'text/html': 'html',
    'text/csv': 'csv',
  };
  return known[mediaType] ?? 'txt';
}
