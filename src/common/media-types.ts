import { fileTypeFromBuffer } from 'file-type';
import { imageSize } from 'image-size';

/*
 * The images and documents a model takes as inputs ("Attachments"), told by their bytes: what an
 * upload is checked against (files/) and what read_file returns as an attachment (tools/).
 */

/** The images every provider takes. */
export const IMAGE_TYPES: ReadonlySet<string> = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
]);
export const PDF_TYPE = 'application/pdf';

/** How many leading bytes the sniffer reads (file-type needs at most this many for the types above). */
export const SNIFF_BYTES = 4100;

/** What file-type makes of a file's first bytes (SNIFF_BYTES are enough): its media type, or null. */
export async function sniffedType(head: Buffer): Promise<string | null> {
  return (await fileTypeFromBuffer(head.subarray(0, SNIFF_BYTES)))?.mime ?? null;
}

/** Whether `mediaType` is an image or a PDF a model takes as an input. */
export function isVisualType(mediaType: string | null): mediaType is string {
  return mediaType !== null && (IMAGE_TYPES.has(mediaType) || mediaType === PDF_TYPE);
}

/** An image's pixels, as image-size reads them from its bytes; null when they do not decode. */
export function imageDimensions(bytes: Buffer): { width: number; height: number } | null {
  try {
    const { width, height } = imageSize(bytes);
    return width > 0 && height > 0 ? { width, height } : null;
  } catch {
    return null;
  }
}
