import type { FileHandle } from 'node:fs/promises';
import { basename } from 'node:path';
import { IMAGE_TYPES, imageDimensions, isVisualType, sniffedType } from '../../common/media-types';
import { ToolError, type ToolContext, type ToolResult } from '../tool';

/**
 * read_file of an image or a PDF ("Attachments"), told by its bytes (file-type, as an upload is),
 * never by its name: the result's text says what it is, and the file goes with it as an attachment
 * for the model to see — or, for a model known not to take images and PDFs, the text says so and
 * nothing is read. Null for any other file (read as text, or refused as binary).
 */
export async function visualFileResult(
  handle: FileHandle,
  size: number,
  head: Buffer,
  shown: string,
  ctx: ToolContext,
): Promise<ToolResult | null> {
  const mediaType = await sniffedType(head);
  if (!isVisualType(mediaType)) return null;
  const what = `${shown}: ${IMAGE_TYPES.has(mediaType) ? 'image' : 'PDF document'} (${mediaType}, ${size} bytes)`;
  if (ctx.modelTakesFiles === false) {
    return {
      content: `${what}. This model does not take images or PDFs, so the file is not shown to it; ask for a model that does, or read something else.`,
    };
  }
  if (size > ctx.config.fileMaxBytes) {
    throw new ToolError(
      'SIZE_LIMIT',
      `${what} is larger than the limit of ${ctx.config.fileMaxBytes} bytes (FILE_MAX_BYTES) for a file shown to the model.`,
    );
  }
  const bytes = await readWhole(handle, size);
  const pixels = IMAGE_TYPES.has(mediaType) ? imageDimensions(bytes) : null;
  if (IMAGE_TYPES.has(mediaType) && pixels === null) {
    return { content: `${what}: its bytes do not decode as an image; its content is not shown.` };
  }
  return {
    content: `${what}${pixels ? `, ${pixels.width}×${pixels.height} pixels` : ''}: attached.`,
    attachment: {
      name: fileNameOf(shown),
      mediaType,
      bytes,
      width: pixels?.width ?? null,
      height: pixels?.height ?? null,
    },
  };
}

/** The file's first `size` bytes (all of it, as stat saw it; a file that shrank since gives what it has). */
async function readWhole(handle: FileHandle, size: number): Promise<Buffer> {
  const buffer = Buffer.alloc(size);
  let have = 0;
  while (have < size) {
    const { bytesRead } = await handle.read(buffer, have, size - have, have);
    if (bytesRead === 0) break;
    have += bytesRead;
  }
  return have === size ? buffer : buffer.subarray(0, have);
}

/** The file's name as a stored file's (1–255 characters, no control characters). */
function fileNameOf(shown: string): string {
  return basename(shown).replace(CONTROL, '_').slice(0, 255) || 'file';
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/g;
