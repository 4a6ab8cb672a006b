import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { Client } from 'pg';
import { png, pdf } from '../support/attachments';
import { startApp, type TestApp } from '../support/app';

const ALICE = { authorization: 'Bearer alice-secret-123' };
const BOB = { authorization: 'Bearer bob-secret-456' };

interface FileJson {
  id: string;
  name: string;
  mediaType: string;
  size: number;
  sha256: string;
  createdAt: string;
}

describe('files (POST/GET/DELETE /v1/files)', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startApp({
      API_KEYS: 'alice:alice-secret-123,bob:bob-secret-456',
      FILE_MAX_BYTES: '65536',
      BODY_LIMIT_BYTES: '1024',
    });
  });
  afterAll(() => app.close());

  const upload = (
    body: Buffer | FormData,
    type: string | null,
    query = '',
    headers: Record<string, string> = ALICE,
  ) =>
    fetch(`${app.url}/v1/files${query}`, {
      method: 'POST',
      headers: { ...headers, ...(type === null ? {} : { 'content-type': type }) },
      body,
    });

  async function uploaded(
    body: Buffer,
    type: string,
    query = '',
    headers: Record<string, string> = ALICE,
  ): Promise<FileJson> {
    const res = await upload(body, type, query, headers);
    expect(res.status).toBe(201);
    return (await res.json()) as FileJson;
  }

  it('takes a raw body, types it by its bytes and gives the same bytes back', async () => {
    const bytes = png(4, 2);
    const file = await uploaded(bytes, 'image/png', '?name=screen%20shot.png');
    expect(file).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'screen shot.png',
      mediaType: 'image/png',
      size: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      createdAt: expect.any(String),
    });

    const got = await fetch(`${app.url}/v1/files/${file.id}`, { headers: ALICE });
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('image/png');
    expect(got.headers.get('x-content-type-options')).toBe('nosniff');
    expect(got.headers.get('content-disposition')).not.toMatch(/^attachment/);
    expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);

    const meta = await fetch(`${app.url}/v1/files/${file.id}/meta`, { headers: ALICE });
    expect(await meta.json()).toEqual(file);
  });

  it('takes one multipart part `file`; a non-image is served as an attachment', async () => {
    const form = new FormData();
    form.append('file', new Blob([pdf()], { type: 'application/pdf' }), 'report.pdf');
    const res = await upload(form, null);
    expect(res.status).toBe(201);
    const file = (await res.json()) as FileJson;
    expect(file).toMatchObject({ name: 'report.pdf', mediaType: 'application/pdf', size: pdf().length });

    const got = await fetch(`${app.url}/v1/files/${file.id}`, { headers: ALICE });
    expect(got.headers.get('content-type')).toBe('application/pdf');
    expect(got.headers.get('content-disposition')).toMatch(/^attachment; filename="report.pdf"/);
    expect(Buffer.from(await got.arrayBuffer()).equals(pdf())).toBe(true);

    const wrongPart = new FormData();
    wrongPart.append('upload', new Blob([pdf()], { type: 'application/pdf' }), 'report.pdf');
    expect((await upload(wrongPart, null)).status).toBe(400);
  });

  it('judges the bytes, not the declared type or name', async () => {
    // Bytes that are a PNG, sent as "whatever": a PNG, named by its type.
    const sniffed = await uploaded(png(), 'application/octet-stream');
    expect(sniffed).toMatchObject({ mediaType: 'image/png', name: 'file.png' });

    // An "image" whose bytes do not decode, a PNG sent as JPEG, text with a NUL, JSON that does not parse: 400.
    const broken = Buffer.concat([png().subarray(0, 8), Buffer.from('not an image at all')]);
    expect((await upload(broken, 'image/png')).status).toBe(400);
    expect((await upload(png(), 'image/jpeg')).status).toBe(400);
    expect((await upload(Buffer.from('a\u0000b'), 'text/plain')).status).toBe(400);
    expect((await upload(Buffer.from([0x61, 0xff, 0x62]), 'text/plain')).status).toBe(400);
    expect((await upload(Buffer.from('{"a":'), 'application/json')).status).toBe(400);

    // A type files may not have (a ZIP by its bytes, whatever it claims; an unknown declared type): 415.
    const zip = Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.alloc(60)]);
    expect((await upload(zip, 'text/plain')).status).toBe(415);
    expect((await upload(Buffer.from('hello'), 'application/x-thing')).status).toBe(415);

    // Text and JSON are kept with their type, over BODY_LIMIT_BYTES (1024) since it does not apply here.
    const json = Buffer.from(JSON.stringify({ items: 'x'.repeat(4000) }));
    expect(await uploaded(json, 'application/json; charset=utf-8', '?name=data.json')).toMatchObject({
      mediaType: 'application/json',
      size: json.length,
    });
    const md = await uploaded(Buffer.from('# Notes\n'), 'text/markdown');
    const got = await fetch(`${app.url}/v1/files/${md.id}`, { headers: ALICE });
    expect(got.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    expect(got.headers.get('content-disposition')).toMatch(/^attachment/);
  });

  it('refuses a file over FILE_MAX_BYTES with a 413 while it arrives, raw or multipart', async () => {
    // A body that never ends: the answer can only come from the bound, not from its end.
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${app.url}/v1/files`, {
        method: 'POST',
        headers: { ...ALICE, 'content-type': 'text/plain', 'transfer-encoding': 'chunked' },
      });
      req.on('response', (res) => {
        resolve(res.statusCode ?? 0);
        res.resume();
        req.destroy();
      });
      req.on('error', reject);
      for (let i = 0; i < 80; i++) req.write('x'.repeat(1024));
    });
    expect(status).toBe(413);

    const form = new FormData();
    form.append('file', new Blob([Buffer.alloc(70_000, 'a')], { type: 'text/plain' }), 'big.txt');
    expect((await upload(form, null)).status).toBe(413);
  });

  it("is the uploader's: another key's or end user's file is a 404", async () => {
    const file = await uploaded(png(1, 1), 'image/png', '', { ...ALICE, 'x-end-user': 'ann' });
    for (const headers of [BOB, { ...ALICE, 'x-end-user': 'ben' }]) {
      for (const path of [`/v1/files/${file.id}`, `/v1/files/${file.id}/meta`]) {
        expect((await fetch(`${app.url}${path}`, { headers })).status).toBe(404);
      }
      const list = (await (await fetch(`${app.url}/v1/files`, { headers })).json()) as { data: FileJson[] };
      expect(list.data.map((f) => f.id)).not.toContain(file.id);
      expect((await fetch(`${app.url}/v1/files/${file.id}`, { method: 'DELETE', headers })).status).toBe(404);
    }
    // The key's own requests (no end user) see all of its files.
    expect((await fetch(`${app.url}/v1/files/${file.id}/meta`, { headers: ALICE })).status).toBe(200);
    expect(
      (await fetch(`${app.url}/v1/files/${file.id}/meta`, { headers: { ...ALICE, 'x-end-user': 'ann' } }))
        .status,
    ).toBe(200);
    expect((await fetch(`${app.url}/v1/files/not-a-uuid`, { headers: ALICE })).status).toBe(404);
  });

  it('stores identical bytes once, and removes them with the last file that holds them', async () => {
    const bytes = png(7, 7, [1, 2, 3]);
    const first = await uploaded(bytes, 'image/png', '?name=a.png');
    const second = await uploaded(bytes, 'image/png', '?name=b.png', BOB);
    expect(second.id).not.toBe(first.id);
    expect(second.sha256).toBe(first.sha256);

    const db = new Client({ connectionString: app.databaseUrl });
    await db.connect();
    const blobs = async () =>
      Number(
        (await db.query('SELECT count(*) AS n FROM file_blobs WHERE sha256 = $1', [first.sha256])).rows[0].n,
      );
    try {
      expect(await blobs()).toBe(1);
      expect(
        (await fetch(`${app.url}/v1/files/${first.id}`, { method: 'DELETE', headers: ALICE })).status,
      ).toBe(204);
      expect(await blobs()).toBe(1);
      const got = await fetch(`${app.url}/v1/files/${second.id}`, { headers: BOB });
      expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);
      expect(
        (await fetch(`${app.url}/v1/files/${second.id}`, { method: 'DELETE', headers: BOB })).status,
      ).toBe(204);
      expect(await blobs()).toBe(0);
      expect((await fetch(`${app.url}/v1/files/${second.id}/meta`, { headers: BOB })).status).toBe(404);
    } finally {
      await db.end();
    }
  });

  it('lists newest first, paged like sessions', async () => {
    const carol = { ...ALICE, 'x-end-user': 'carol' };
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await uploaded(Buffer.from(`note ${i}`), 'text/plain', '', carol)).id);
    const first = (await (await fetch(`${app.url}/v1/files?limit=2`, { headers: carol })).json()) as {
      data: FileJson[];
      nextCursor: string | null;
    };
    expect(first.data.map((f) => f.id)).toEqual([ids[2], ids[1]]);
    const rest = (await (
      await fetch(`${app.url}/v1/files?limit=2&cursor=${first.nextCursor}`, { headers: carol })
    ).json()) as { data: FileJson[]; nextCursor: string | null };
    expect(rest).toEqual({ data: [expect.objectContaining({ id: ids[0] })], nextCursor: null });
  });
});
