import { Readable } from 'node:stream';
import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { DomainError, ErrorCode } from '../common/domain-error';
import { decodeCursor, encodeCursor } from '../common/page-cursor';
import { FILE_PART_BYTES, FileStore, type FileReader, type FileRow } from '../store/file-store.service';
import { classifyBytes, extensionFor, piecesOf, readBounded, type ReadBytes } from './file-bytes';
import { fileName } from './file-name';

/** An upload as it arrives: its chunks, its declared type, the name the client gave (if any). */
export interface IncomingFile {
  chunks: AsyncIterable<Buffer | Uint8Array>;
  declaredType: string | null;
  name: string | null;
}

export interface FilePage {
  data: FileRow[];
  nextCursor: string | null;
}

/**
 * Uploaded files ("Attachments"): read within FILE_MAX_BYTES, typed by their bytes, stored in
 * PostgreSQL once per content, owned by the key and end user that uploaded them.
 */
@Injectable()
export class Files {
  constructor(
    private readonly files: FileStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async upload(reader: FileReader, incoming: IncomingFile): Promise<FileRow> {
    const read = await readBounded(incoming.chunks, this.config.fileMaxBytes);
    return this.store(reader, read, incoming.declaredType, incoming.name);
  }

  /** Stores bytes already in memory (a data URL in a prompt) under the same rules as an upload. */
  async storeBytes(
    reader: FileReader,
    bytes: Buffer,
    declaredType: string | null,
    name: string | null,
  ): Promise<FileRow> {
    const read = await readBounded([bytes], this.config.fileMaxBytes);
    return this.store(reader, read, declaredType, name);
  }

  private async store(
    reader: FileReader,
    read: ReadBytes,
    declaredType: string | null,
    name: string | null,
  ): Promise<FileRow> {
    if (read.size === 0) throw new DomainError(ErrorCode.InvalidRequest, 'The file is empty');
    const kind = await classifyBytes(read, declaredType);
    return this.files.insert(
      {
        id: randomUUID(),
        owner: reader.owner,
        endUser: reader.endUser,
        name: name === null ? `file.${extensionFor(kind.mediaType)}` : fileName(name),
        mediaType: kind.mediaType,
        size: read.size,
        sha256: read.sha256,
        width: kind.width,
        height: kind.height,
      },
      piecesOf(read.chunks, FILE_PART_BYTES),
    );
  }

  async list(reader: FileReader, limit: number, cursor: string | undefined): Promise<FilePage> {
    const rows = await this.files.list(reader, limit + 1, cursor ? decodeCursor(cursor) : null);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      data: page.map(({ cursorAt: _, ...file }) => file),
      nextCursor: rows.length > limit && last ? encodeCursor(last.cursorAt, last.id) : null,
    };
  }

  async meta(reader: FileReader, id: string): Promise<FileRow> {
    const file = await this.files.find(reader, id);
    if (!file) throw fileNotFound(id);
    return file;
  }

  /** The file and its bytes as a stream read part by part. */
  async open(reader: FileReader, id: string): Promise<{ file: FileRow; stream: Readable }> {
    const file = await this.meta(reader, id);
    return { file, stream: Readable.from(this.parts(file)) };
  }

  /** A file's whole bytes (for a model request), read part by part. */
  async bytes(file: FileRow): Promise<Buffer> {
    const parts: Buffer[] = [];
    for await (const part of this.parts(file)) parts.push(part);
    return Buffer.concat(parts);
  }

  private async *parts(file: FileRow): AsyncGenerator<Buffer> {
    for (let seq = 0; seq * FILE_PART_BYTES < file.size; seq++) {
      const part = await this.files.readPart(file.sha256, seq);
      if (part === null) throw fileNotFound(file.id);
      yield part;
    }
  }

  async delete(reader: FileReader, id: string): Promise<void> {
    if (!(await this.files.delete(reader, id))) throw fileNotFound(id);
  }
}

export function fileNotFound(id: string): DomainError {
  return new DomainError(ErrorCode.FileNotFound, `File ${id} not found`);
}
