import { Injectable } from '@nestjs/common';
import { DomainError, ErrorCode } from '../common/domain-error';
import type { StoredMessagePart } from '../persistence/entities/message.entity';
import { FileStore, filePart, type FileReader, type FileRow } from '../store/file-store.service';
import { bareMediaType } from './file-bytes';
import { Files } from './files.service';
import { promptText, type PromptInput } from './prompt-parts';

/** A prompt ready to store: its text, and its parts when it had files (references, not bytes). */
export interface ResolvedPrompt {
  content: string;
  parts: StoredMessagePart[] | null;
  /** The files it uses, for the checks of what the model takes. */
  files: FileRow[];
}

const DATA_URL = /^data:([^,;]*)((?:;[^,;]*)*?);base64,(.*)$/s;

/**
 * A prompt's parts made storable before anything starts: each `fileId` must be the caller's file
 * (else a 400 naming it), each data URL is stored as a file first (under the upload's rules).
 */
@Injectable()
export class Prompts {
  constructor(
    private readonly files: Files,
    private readonly store: FileStore,
  ) {}

  async resolve(reader: FileReader, prompt: PromptInput): Promise<ResolvedPrompt> {
    if (typeof prompt === 'string') return { content: prompt, parts: null, files: [] };
    const ids = prompt.flatMap((p) => (p.type === 'file' && 'fileId' in p ? [p.fileId] : []));
    const owned = await this.store.findMany(
      reader,
      ids.filter((id) => UUID.test(id)),
    );
    const missing = ids.find((id) => !owned.has(id.toLowerCase()));
    if (missing !== undefined) {
      throw new DomainError(
        ErrorCode.InvalidRequest,
        `fileId ${missing.slice(0, 100)} is not one of your files`,
      );
    }
    const parts: StoredMessagePart[] = [];
    const files: FileRow[] = [];
    for (const part of prompt) {
      if (part.type === 'text') {
        parts.push(part);
        continue;
      }
      const file =
        'fileId' in part ? owned.get(part.fileId.toLowerCase())! : await this.fromDataUrl(reader, part);
      files.push(file);
      parts.push(filePart(file));
    }
    if (files.length === 0) return { content: promptText(prompt), parts: null, files };
    return { content: promptText(prompt), parts, files };
  }

  private async fromDataUrl(reader: FileReader, part: { url: string; name?: string }): Promise<FileRow> {
    const m = DATA_URL.exec(part.url);
    if (!m) {
      throw new DomainError(
        ErrorCode.InvalidRequest,
        "a file part's url must be a data URL (data:<type>;base64,…)",
      );
    }
    const bytes = Buffer.from(m[3], 'base64');
    return this.files.storeBytes(reader, bytes, bareMediaType(m[1]), part.name ?? null);
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
