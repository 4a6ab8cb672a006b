import { Injectable } from '@nestjs/common';
import { createHash, randomUUID } from 'node:crypto';
import type { StoredMessagePart } from '../persistence/entities/message.entity';
import { FILE_PART_BYTES, FileStore, filePart } from '../store/file-store.service';
import type { ToolAttachment } from '../tools/tool';
import type { RunHandle } from './run-handle';

/**
 * A tool result's attachment ("Attachments": read_file of an image or PDF) kept as a file of the
 * session's key and end user — stored once per content, as an upload is — so that its tool
 * message holds a reference, not the bytes: its parts are its text, then the file.
 */
@Injectable()
export class ToolAttachments {
  constructor(private readonly files: FileStore) {}

  async store(h: RunHandle, text: string, attachment: ToolAttachment): Promise<StoredMessagePart[]> {
    const { bytes } = attachment;
    const file = await this.files.insert(
      {
        id: randomUUID(),
        owner: h.session.owner,
        endUser: h.session.endUser,
        name: attachment.name,
        mediaType: attachment.mediaType,
        size: bytes.length,
        sha256: createHash('sha256').update(bytes).digest('hex'),
        width: attachment.width,
        height: attachment.height,
      },
      partsOf(bytes),
    );
    return [{ type: 'text', text }, filePart(file)];
  }
}

/** The bytes in the store's parts (views, not copies). */
function* partsOf(bytes: Buffer): Generator<Buffer> {
  for (let at = 0; at < bytes.length; at += FILE_PART_BYTES) yield bytes.subarray(at, at + FILE_PART_BYTES);
}
