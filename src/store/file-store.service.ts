import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { StoredMessagePart } from '../persistence/entities/message.entity';
import { returningRows } from './store-sql';

/** One uploaded file's metadata ("Attachments"). */
export interface FileRow {
  id: string;
  owner: string;
  endUser: string | null;
  name: string;
  mediaType: string;
  size: number;
  /** Lowercase hex. */
  sha256: string;
  width: number | null;
  height: number | null;
  createdAt: Date;
}

export type NewFile = Omit<FileRow, 'createdAt'>;

/** A stored message's part that refers to `file` (a prompt's, a read_file result's): the reference, not the bytes. */
export function filePart(file: FileRow): Extract<StoredMessagePart, { type: 'file' }> {
  return {
    type: 'file',
    fileId: file.id,
    name: file.name,
    mediaType: file.mediaType,
    size: file.size,
    width: file.width,
    height: file.height,
  };
}

/** The size of a blob's stored parts: what one statement writes or reads (bounds a download's memory). */
export const FILE_PART_BYTES = 1024 * 1024;

/** Who asks: a key, and the end user its request names (null: all of the key's files). */
export interface FileReader {
  owner: string;
  endUser: string | null;
}

const FILE_COLUMNS = `id, owner, end_user AS "endUser", name, media_type AS "mediaType", size, sha256, width, height, created_at AS "createdAt"`;

/** `owner = $1` and, for a request that names an end user, `end_user = $2`. */
function readerFilter(reader: FileReader, alias = ''): { sql: string; params: unknown[] } {
  return reader.endUser === null
    ? { sql: `${alias}owner = $1`, params: [reader.owner] }
    : { sql: `${alias}owner = $1 AND ${alias}end_user = $2`, params: [reader.owner, reader.endUser] };
}

/** PostgreSQL error code of a foreign-key violation. */
const FOREIGN_KEY_VIOLATION = '23503';

/**
 * Files and their blobs in PostgreSQL. Every read takes the reader: another key's (or end user's)
 * file does not exist. Identical bytes are one blob; the last file's delete removes it.
 */
@Injectable()
export class FileStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Stores a file over the blob of its bytes, in one transaction: the blob's row first — locked by
   * the upsert, so a concurrent delete of its last other file cannot remove it under this one —,
   * then its parts, one statement each, only when the blob is new, then the file.
   */
  async insert(file: NewFile, pieces: Iterable<Buffer>): Promise<FileRow> {
    return this.db.transaction(async (tx) => {
      const blob: { inserted: boolean }[] = await tx.query(
        `INSERT INTO file_blobs (sha256, size) VALUES ($1, $2::int)
         ON CONFLICT (sha256) DO UPDATE SET size = EXCLUDED.size
         RETURNING (xmax = 0) AS inserted`,
        [file.sha256, file.size],
      );
      if (blob[0].inserted) {
        let seq = 0;
        for (const piece of pieces) {
          await tx.query(`INSERT INTO file_blob_parts (sha256, seq, bytes) VALUES ($1, $2::int, $3)`, [
            file.sha256,
            seq++,
            piece,
          ]);
        }
      }
      const rows: FileRow[] = await tx.query(
        `INSERT INTO files (id, owner, end_user, name, media_type, size, sha256, width, height)
         VALUES ($1, $2, $3, $4, $5, $6::int, $7, $8::int, $9::int)
         RETURNING ${FILE_COLUMNS}`,
        [
          file.id,
          file.owner,
          file.endUser,
          file.name,
          file.mediaType,
          file.size,
          file.sha256,
          file.width,
          file.height,
        ],
      );
      return rows[0];
    });
  }

  async find(reader: FileReader, id: string): Promise<FileRow | null> {
    const where = readerFilter(reader);
    const rows: FileRow[] = await this.db.query(
      `SELECT ${FILE_COLUMNS} FROM files WHERE ${where.sql} AND id = $${where.params.length + 1}`,
      [...where.params, id],
    );
    return rows[0] ?? null;
  }

  /** Those of `ids` the reader may use, by id (one query for a prompt's parts). */
  async findMany(reader: FileReader, ids: readonly string[]): Promise<Map<string, FileRow>> {
    if (ids.length === 0) return new Map();
    const where = readerFilter(reader);
    const rows: FileRow[] = await this.db.query(
      `SELECT ${FILE_COLUMNS} FROM files WHERE ${where.sql} AND id = ANY($${where.params.length + 1}::uuid[])`,
      [...where.params, ids],
    );
    return new Map(rows.map((r) => [r.id, r]));
  }

  /** Files by id whoever owns them (what a stored message references; deleted ones are missing). */
  async findByIds(ids: readonly string[]): Promise<Map<string, FileRow>> {
    if (ids.length === 0) return new Map();
    const rows: FileRow[] = await this.db.query(
      `SELECT ${FILE_COLUMNS} FROM files WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    return new Map(rows.map((r) => [r.id, r]));
  }

  /** Newest first; the cursor is the last row's (created_at, id). */
  async list(
    reader: FileReader,
    limit: number,
    cursor: { createdAt: string; id: string } | null,
  ): Promise<(FileRow & { cursorAt: string })[]> {
    const where = readerFilter(reader);
    const n = where.params.length;
    return this.db.query(
      `SELECT ${FILE_COLUMNS}, created_at::text AS "cursorAt" FROM files
        WHERE ${where.sql}
        ${cursor ? `AND (created_at, id) < ($${n + 2}::timestamptz, $${n + 3}::uuid)` : ''}
        ORDER BY created_at DESC, id DESC LIMIT $${n + 1}`,
      cursor ? [...where.params, limit, cursor.createdAt, cursor.id] : [...where.params, limit],
    );
  }

  /** Part `seq` of a blob's bytes (a download reads its file part by part); null past its end. */
  async readPart(sha256: string, seq: number): Promise<Buffer | null> {
    const rows: { bytes: Buffer }[] = await this.db.query(
      `SELECT bytes FROM file_blob_parts WHERE sha256 = $1 AND seq = $2::int`,
      [sha256, seq],
    );
    return rows[0]?.bytes ?? null;
  }

  /** A file's whole bytes by id, whoever owns it (a stored message's reference), part by part; null when gone. */
  async readFile(id: string): Promise<Buffer | null> {
    const file = (await this.findByIds([id])).get(id);
    if (!file) return null;
    const parts: Buffer[] = [];
    for (let seq = 0, read = 0; read < file.size; seq++) {
      const part = await this.readPart(file.sha256, seq);
      if (part === null) return null;
      parts.push(part);
      read += part.length;
    }
    return Buffer.concat(parts);
  }

  /** Deletes the reader's file, and its blob when no other file holds it; whether there was one. */
  async delete(reader: FileReader, id: string): Promise<boolean> {
    const where = readerFilter(reader);
    const rows = returningRows<{ sha256: string }>(
      await this.db.query(
        `DELETE FROM files WHERE ${where.sql} AND id = $${where.params.length + 1} RETURNING sha256`,
        [...where.params, id],
      ),
    );
    const gone = rows[0];
    if (!gone) return false;
    try {
      await this.db.query(
        `DELETE FROM file_blobs b WHERE b.sha256 = $1 AND NOT EXISTS (SELECT 1 FROM files f WHERE f.sha256 = $1)`,
        [gone.sha256],
      );
    } catch (error) {
      // An upload of the same bytes committed meanwhile: the blob is its now.
      if ((error as { code?: unknown }).code !== FOREIGN_KEY_VIOLATION) throw error;
    }
    return true;
  }
}
