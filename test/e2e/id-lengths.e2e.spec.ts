import { randomBytes, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startApp, type TestApp } from '../support/app';
import { FakeUpstream, text, toolCalls } from '../support/fake-upstream';
import { api, openStream } from '../support/sse-client';

/**
 * Every id that reaches a path, an index or a header, at the lengths a client or a model can send:
 * each is taken when the contract allows it and answered with a clear 4xx otherwise — never 414
 * (Fastify's parameter limit), never 500 or a failed run (an index row too large).
 */

/** Random, so PostgreSQL cannot compress it below its index row limit. */
const incompressible = (chars: number) =>
  randomBytes(Math.ceil(chars / 2))
    .toString('hex')
    .slice(0, chars);

describe('ids of every length (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({ OPENAI_BASE_URL: upstream.baseUrl });
    writeFileSync(join(app.workspace, 'notes.txt'), 'the notes\n');
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });
  beforeEach(() => upstream.reset());

  describe('tool-call ids from the upstream', () => {
    it('replaces a 150-character id, so the approval endpoint of the call answers and the run completes', async () => {
      const wireId = `call_${'x'.repeat(145)}`;
      upstream.enqueue(
        toolCalls([{ id: wireId, name: 'write_file', arguments: { path: 'long-id.txt', content: 'x' } }]),
        text('Written.'),
      );
      const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Write it.' } });
      const events = await stream.until('tool_approval_required');
      const runId = events[0].data.runId as string;
      const callId = events.at(-1)!.data.toolCallId as string;
      expect(callId).not.toBe(wireId);
      expect(callId).toMatch(/^[A-Za-z0-9_.:-]{1,64}$/);

      const approved = await api(app.url, 'POST', `/v1/runs/${runId}/tool-calls/${callId}/approval`, {
        approve: true,
      });
      expect(approved.status).toBe(202);
      const rest = await stream.rest();
      expect(rest.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
      // The model hears its call and the result under the one id the run uses.
      const sent = upstream.requests[1].body.messages as unknown as Record<string, unknown>[];
      expect(sent.at(-1)).toMatchObject({ role: 'tool', tool_call_id: callId });
    });

    it('replaces an 8,000-character id and ids outside the safe set, each call under its own id, and the run completes', async () => {
      const huge = incompressible(8000);
      upstream.enqueue(
        toolCalls([
          { id: huge, name: 'read_file', arguments: { path: 'notes.txt' } },
          { id: 'id with/slash?and space', name: 'list_directory', arguments: { path: '.' } },
        ]),
        text('Read.'),
      );
      const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Read it.' } });
      const events = await stream.rest();
      expect(events.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
      const starts = events.filter((e) => e.event === 'tool_call_start').map((e) => e.data.toolCallId);
      expect(starts).toHaveLength(2);
      expect(new Set(starts).size).toBe(2);
      for (const id of starts) expect(id).toMatch(/^[A-Za-z0-9_.:-]{1,64}$/);
    });
  });

  describe('ids in paths', () => {
    it('answers a session or run id of any length that is not one with 404, never 414', async () => {
      for (const id of ['x', randomUUID() + 'x', 'x'.repeat(150), incompressible(8000)]) {
        expect((await api(app.url, 'GET', `/v1/sessions/${id}`)).status).toBe(404);
        expect((await api(app.url, 'GET', `/v1/sessions/${id}/changes`)).status).toBe(404);
        expect((await api(app.url, 'DELETE', `/v1/sessions/${id}`)).status).toBe(404);
        expect((await api(app.url, 'GET', `/v1/runs/${id}`)).status).toBe(404);
        expect((await api(app.url, 'GET', `/v1/runs/${id}/events`)).status).toBe(404);
        expect((await api(app.url, 'POST', `/v1/runs/${id}/cancel`)).status).toBe(404);
        expect((await api(app.url, 'POST', `/v1/sessions/${id}/messages`, { content: 'x' })).status).toBe(
          404,
        );
      }
    });

    it('answers a tool call id of any length that names no call with 404, never 414', async () => {
      upstream.enqueue(text('Done.'));
      const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt: 'Hi.' } });
      const runId = (await stream.rest())[0].data.runId as string;
      for (const callId of ['c', 'c'.repeat(150), incompressible(8000)]) {
        const approval = await api(app.url, 'POST', `/v1/runs/${runId}/tool-calls/${callId}/approval`, {
          approve: true,
        });
        expect(approval.status).toBe(404);
        const result = await api(app.url, 'POST', `/v1/runs/${runId}/tool-calls/${callId}/result`, {
          content: 'x',
        });
        expect(result.status).toBe(404);
      }
    });

    it('answers an AI SDK chat id on the resume route: 1–200 characters taken (204), longer a 400', async () => {
      for (const [chatId, status] of [
        ['c'.repeat(150), 204],
        ['c'.repeat(200), 204],
        ['c'.repeat(201), 400],
        [incompressible(8000), 400],
      ] as const) {
        expect((await api(app.url, 'GET', `/v1/ai-sdk/chat/${chatId}/stream`)).status).toBe(status);
      }
    });
  });

  describe('ids in bodies that name an indexed row', () => {
    it('takes an AI SDK chat id of 200 characters and refuses 201 and 8,000 with 400', async () => {
      upstream.fallback = text('Fine.');
      const post = (id: string) =>
        fetch(`${app.url}/v1/ai-sdk/chat`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            id,
            trigger: 'submit-message',
            messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Hi' }] }],
          }),
        });
      const ok = await post(incompressible(200));
      expect(ok.status).toBe(200);
      await ok.text();
      expect((await post(incompressible(201))).status).toBe(400);
      expect((await post(incompressible(8000))).status).toBe(400);
    });
  });

  describe('headers', () => {
    it('replaces an X-Request-Id that is not a plain token of 1–128 characters, and answers', async () => {
      const plain = 'r'.repeat(128);
      const kept = await fetch(`${app.url}/health/live`, { headers: { 'x-request-id': plain } });
      expect(kept.headers.get('x-request-id')).toBe(plain);
      const long = await fetch(`${app.url}/health/live`, {
        headers: { 'x-request-id': incompressible(8000) },
      });
      expect(long.status).toBe(200);
      expect(long.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    });
  });

  describe('Idempotency-Key', () => {
    it('takes a key of 200 characters and refuses 201 and 8,000 with 400', async () => {
      upstream.fallback = text('Fine.');
      const chat = (key: string) =>
        openStream(`${app.url}/v1/chat`, { body: { prompt: 'Hi.' }, headers: { 'idempotency-key': key } });
      const ok = await chat(incompressible(200));
      expect(ok.status).toBe(200);
      await ok.rest();
      expect((await chat(incompressible(201))).status).toBe(400);
      expect((await chat(incompressible(8000))).status).toBe(400);
    });
  });
});
