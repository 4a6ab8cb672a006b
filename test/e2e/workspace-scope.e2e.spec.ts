import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startApp, type TestApp } from '../support/app';
import { FakeUpstream, text, toolCalls } from '../support/fake-upstream';
import { api, openStream, type StreamEvent } from '../support/sse-client';

/** WORKSPACE_SCOPE: no key (or session) reads another's files, through any tool. */

const KEYS = 'alice:alice-secret-1,bob:bob-secret-2';
const as = (secret: string) => ({ authorization: `Bearer ${secret}` });
const results = (events: StreamEvent[]) =>
  events.filter((e) => e.event === 'tool_call_result').map((e) => e.data);

describe.each(['key', 'session'] as const)('WORKSPACE_SCOPE=%s (e2e)', (scope) => {
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({
      OPENAI_BASE_URL: upstream.baseUrl,
      API_KEYS: KEYS,
      WORKSPACE_SCOPE: scope,
      ENABLE_RUN_COMMAND: 'true',
      TOOL_POLICY: 'run_command=allow',
      PATH: process.env.PATH ?? '/usr/bin:/bin',
    });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });
  beforeEach(() => upstream.reset());

  async function chat(secret: string, body: Record<string, unknown>) {
    const stream = await openStream(`${app.url}/v1/chat`, { body, headers: as(secret) });
    expect(stream.status).toBe(200);
    return { sessionId: stream.headers.get('x-session-id')!, events: await stream.rest() };
  }

  it("keeps one key's (and one session's) files from every tool of another", async () => {
    upstream.enqueue(
      toolCalls([{ name: 'write_file', arguments: { path: 'notes.txt', content: 'alice only\n' } }]),
      text('Written.'),
    );
    const alice = await chat('alice-secret-1', { prompt: 'Write it.', mode: 'write' });
    expect(results(alice.events)[0]).toMatchObject({ isError: false });
    const aliceFolder =
      scope === 'key' ? join(app.workspace, 'alice') : join(app.workspace, 'alice', alice.sessionId);
    expect(readFileSync(join(aliceFolder, 'notes.txt'), 'utf8')).toBe('alice only\n');
    expect(existsSync(join(app.workspace, 'notes.txt'))).toBe(false);

    // Bob, and (with per-session workspaces) Alice in another session, try every way in.
    const intruders = [['bob-secret-2', 'bob']];
    if (scope === 'session') intruders.push(['alice-secret-1', 'alice']);
    for (const [secret] of intruders) {
      upstream.enqueue(
        toolCalls([
          { id: 'c1', name: 'read_file', arguments: { path: 'notes.txt' } },
          { id: 'c2', name: 'read_file', arguments: { path: aliceFolder + '/notes.txt' } },
          { id: 'c3', name: 'search_files', arguments: { pattern: 'alice only' } },
          { id: 'c4', name: 'glob', arguments: { pattern: '**/notes.txt' } },
          { id: 'c5', name: 'list_directory', arguments: { path: '..' } },
          {
            id: 'c6',
            name: 'run_command',
            arguments: { command: `cat ${aliceFolder}/notes.txt ../notes.txt ../*/notes.txt` },
          },
        ]),
        text('Nothing.'),
      );
      const other = await chat(secret, { prompt: 'Look.' });
      const all = other.events;
      const seen = results(all);
      expect(seen).toHaveLength(6);
      for (const r of seen) expect(r.content).not.toContain('alice only');
    }
  });

  if (scope === 'session') {
    it("removes a session's workspace with the session", async () => {
      upstream.enqueue(
        toolCalls([{ name: 'write_file', arguments: { path: 'tmp.txt', content: 'x' } }]),
        text('Done.'),
      );
      const { sessionId } = await chat('bob-secret-2', { prompt: 'Write.', mode: 'write' });
      const folder = join(app.workspace, 'bob', sessionId);
      expect(existsSync(join(folder, 'tmp.txt'))).toBe(true);
      expect(
        (await api(app.url, 'DELETE', `/v1/sessions/${sessionId}`, undefined, as('bob-secret-2'))).status,
      ).toBe(204);
      expect(existsSync(folder)).toBe(false);
    });
  }
});
