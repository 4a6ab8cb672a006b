import { DomainError, ErrorCode } from '../common/domain-error';

/** The longest file name kept. */
export const FILE_NAME_MAX = 255;

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/** A client's file name, as stored: 1–255 characters without control characters (else a 400). */
export function fileName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length < 1 || trimmed.length > FILE_NAME_MAX || CONTROL.test(trimmed)) {
    throw new DomainError(
      ErrorCode.InvalidRequest,
      `name must be 1–${FILE_NAME_MAX} characters without control characters`,
    );
  }
  return trimmed;
}

/** A Content-Disposition header naming the file (RFC 6266: an ASCII fallback and the UTF-8 name). */
export function contentDisposition(kind: 'inline' | 'attachment', name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}
