import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeUpstream, text } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { api, openStream } from '../support/sse-client';

function agentsFile(agents: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), 'loopwright-agents-')), 'agents.json');
  writeFileSync(file, JSON.stringify({ agents }));
  return file;
}

describe('named agents (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({
      OPENAI_BASE_URL: upstream.baseUrl,
      LLM_MODEL: 'openai/base-model',
      AGENTS_CONFIG: agentsFile({
        reviewer: {
          description: 'Reviews a diff for bugs; read-only.',
          systemPrompt: 'You review code.',
          model: 'openai/review-model',
          tools: ['read_file', 'glob'],
          maxIterations: 3,
        },
        writer: { description: 'Writes files.', mode: 'write' },
      }),
    });
  });
  afterAll(async () => {
    await app.close();
    await upstream.close();
  });
  beforeEach(() => upstream.reset());

  it('GET /v1/agents lists the agents with their defaults filled in', async () => {
    const { status, body } = await api(app.url, 'GET', '/v1/agents');
    expect(status).toBe(200);
    expect(body).toHaveLength(2);
    expect(body[0]).toEqual({
      name: 'reviewer',
      description: 'Reviews a diff for bugs; read-only.',
      model: 'openai/review-model',
      mode: 'safe',
      tools: ['read_file', 'glob'],
    });
    expect(body[1]).toMatchObject({ name: 'writer', model: 'openai/base-model', mode: 'write' });
    expect(body[1].tools).toEqual(
      expect.arrayContaining(['read_file', 'write_file', 'edit_file', 'delegate']),
    );
  });

  it('a session of an agent starts from its settings, and its own options override them', async () => {
    upstream.enqueue(text('Looks fine.'));
    const stream = await openStream(`${app.url}/v1/chat`, {
      body: { prompt: 'Review it', agent: 'reviewer' },
    });
    expect(stream.status).toBe(200);
    await stream.rest();
    const request = upstream.requests[0].body as any;
    expect(request.model).toBe('review-model');
    expect(request.messages[0]).toEqual({ role: 'system', content: 'You review code.' });
    expect(request.tools.map((t: any) => t.function.name).sort()).toEqual(['glob', 'read_file']);

    const created = await api(app.url, 'POST', '/v1/sessions', {
      agent: 'reviewer',
      tools: ['glob'],
      maxIterations: 2,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ model: 'openai/review-model', tools: ['glob'], maxIterations: 2 });
  });

  it('refuses an unknown agent with a 400 naming agent', async () => {
    const { status, body } = await api(app.url, 'POST', '/v1/sessions', { agent: 'nobody' });
    expect(status).toBe(400);
    expect(JSON.stringify(body.message)).toContain('agent');
    const chat = await api(app.url, 'POST', '/v1/chat', { prompt: 'hi', agent: 'nobody' });
    expect(chat.status).toBe(400);
  });

  it('GET /v1/tools lists delegate as a builtin with the agents as its enum and descriptions', async () => {
    const { body } = await api(app.url, 'GET', '/v1/tools');
    const delegate = body.find((t: any) => t.name === 'delegate');
    expect(delegate).toMatchObject({ source: 'builtin', policy: 'allow' });
    expect(delegate.parameters.properties.agent.enum).toEqual(['reviewer', 'writer']);
    expect(delegate.description).toContain('reviewer: Reviews a diff for bugs; read-only.');
  });
});

describe('without AGENTS_CONFIG (e2e)', () => {
  it('offers no delegate tool and lists no agents', async () => {
    const app = await startApp({});
    try {
      expect((await api(app.url, 'GET', '/v1/agents')).body).toEqual([]);
      const tools = (await api(app.url, 'GET', '/v1/tools')).body;
      expect(tools.map((t: any) => t.name)).not.toContain('delegate');
    } finally {
      await app.close();
    }
  });
});
