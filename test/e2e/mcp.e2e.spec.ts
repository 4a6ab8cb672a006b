import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { isRunning, lastToolMessage, offeredToolNames, oneEvent, timeline } from '../support/agent-scripts';
import { startApp, type TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { FakeUpstream, text, toolCalls } from '../support/fake-upstream';
import { startMcpHttpServer, type McpHttpTestServer } from '../support/mcp-http-server';
import { api, openStream, type OpenStream, type StreamEvent } from '../support/sse-client';

const TEST_SERVER = resolve(__dirname, '../support/mcp-test-server.mjs');
const EVERYTHING = resolve(
  __dirname,
  '../../node_modules/@modelcontextprotocol/server-everything/dist/index.js',
);
// Installed as a dev dependency; a checkout without it still runs everything else.
const HAS_EVERYTHING = existsSync(EVERYTHING);
if (!HAS_EVERYTHING) console.warn(`skipping the server-everything test: ${EVERYTHING} is not installed`);
const KEY = 'mcp-test-key';
const AUTH = { authorization: `Bearer ${KEY}` };
const REMOTE_TOKEN = 'remote-secret-42';

const lines = (file: string): string[] =>
  existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];

describe('MCP servers as tool sources (e2e)', () => {
  let upstream: FakeUpstream;
  let remote: McpHttpTestServer;
  let flaky: McpHttpTestServer;
  let app: TestApp;
  let dir: string;
  const file = (name: string) => join(dir, name);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'loopwright-mcp-'));
    upstream = await FakeUpstream.start();
    remote = await startMcpHttpServer(REMOTE_TOKEN);
    flaky = await startMcpHttpServer(REMOTE_TOKEN);
    const node = process.execPath;
    const testServer = (name: string, extra: Record<string, unknown> = {}) => ({
      command: node,
      args: [TEST_SERVER],
      env: {
        MARKER_FILE: file(`${name}-marker.txt`),
        CANCEL_FILE: file(`${name}-cancel.txt`),
        START_FILE: file(`${name}-start.txt`),
      },
      ...extra,
    });
    writeFileSync(
      file('mcp.json'),
      JSON.stringify({
        mcpServers: {
          notes: testServer('notes'),
          slowpoke: { ...testServer('slowpoke'), tools: ['slow'], timeoutMs: 1000 },
          crashy: { ...testServer('crashy'), tools: ['crash', 'read_note'] },
          broken: { command: node, args: [TEST_SERVER], env: { FAIL_AT_START: '1' } },
          ...(HAS_EVERYTHING ? { everything: { command: node, args: [EVERYTHING, 'stdio'] } } : {}),
          remote: { url: remote.url, headers: { Authorization: 'Bearer ${REMOTE_TOKEN}' } },
          flaky: { url: flaky.url, headers: { Authorization: 'Bearer ${REMOTE_TOKEN}' } },
        },
      }),
    );
    app = await startApp({
      OPENAI_BASE_URL: upstream.baseUrl,
      OPENAI_API_KEY: 'sk-canary',
      API_KEYS: `tester:${KEY}`,
      MCP_CONFIG: file('mcp.json'),
      REMOTE_TOKEN,
      ...(HAS_EVERYTHING ? { TOOL_POLICY: 'everything__*=deny,everything__echo=allow' } : {}),
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: dir,
    });
    // Start-up does not wait for MCP servers; the tests do.
    await eventually(async () => {
      const servers = (await api(app.url, 'GET', '/v1/mcp/servers', undefined, AUTH)).body as any[];
      const byName = new Map(servers.map((s) => [s.name, s]));
      return (
        ['notes', 'slowpoke', 'crashy', ...(HAS_EVERYTHING ? ['everything'] : []), 'remote', 'flaky'].every(
          (n) => byName.get(n)?.status === 'connected',
        ) && byName.get('broken')?.status === 'failed'
      );
    }, 60_000);
    // Seven servers start beside the app: under load (a fresh clone's whole suite) that outlasts
    // jest's default 30 s for a hook, and every test would fail with it.
  }, 90_000);
  let closed = false;
  afterAll(async () => {
    if (!closed) await app?.close();
    await remote?.close();
    await flaky?.close();
    await upstream?.close();
  });
  beforeEach(() => upstream.reset());

  async function chat(body: Record<string, unknown>): Promise<OpenStream> {
    const stream = await openStream(`${app.url}/v1/chat`, { body, headers: AUTH });
    expect(stream.status).toBe(200);
    return stream;
  }

  /** One tool call by the scripted model, then a final answer; the whole stream. */
  async function callOnce(
    name: string,
    args: Record<string, unknown> = {},
    options: Record<string, unknown> = {},
  ) {
    upstream.enqueue(toolCalls([{ id: 'call_1', name, arguments: args }]), text('Done.'));
    const events = await (await chat({ prompt: `use ${name}`, ...options })).rest();
    return { events, result: oneEvent(events, 'tool_call_result', 'call_1').data };
  }

  it('lists MCP tools beside the built-ins with their source, and each server with its status', async () => {
    const tools = (await api(app.url, 'GET', '/v1/tools', undefined, AUTH)).body as any[];
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get('read_file')).toMatchObject({ source: 'builtin', policy: 'allow' });
    expect(byName.get('notes__read_note')).toMatchObject({
      source: 'mcp:notes',
      description: 'Reads a note by title.',
      policy: 'allow',
      parameters: expect.objectContaining({ required: ['title'] }),
    });
    // No readOnlyHint: a write tool, so safe mode asks a person.
    expect(byName.get('notes__delete_everything')).toMatchObject({ source: 'mcp:notes', policy: 'confirm' });
    expect(byName.get('remote__lookup')).toMatchObject({ source: 'mcp:remote', policy: 'allow' });
    // The allow-list limits slowpoke to one tool.
    expect(tools.filter((t) => t.source === 'mcp:slowpoke').map((t) => t.name)).toEqual(['slowpoke__slow']);

    const expected = [
      ['notes', 'stdio', 'connected'],
      ['slowpoke', 'stdio', 'connected'],
      ['crashy', 'stdio', 'connected'],
      ['broken', 'stdio', 'failed'],
      ...(HAS_EVERYTHING ? [['everything', 'stdio', 'connected']] : []),
      ['remote', 'http', 'connected'],
      ['flaky', 'http', 'connected'],
    ];
    // `broken` retries with backoff, so it is `connecting` for the moment of each attempt (a long
    // one under load): wait for the listing to settle, then assert on what was last seen.
    let servers: any[] = [];
    const statuses = () => servers.map((s) => [s.name, s.transport, s.status]);
    await eventually(async () => {
      servers = (await api(app.url, 'GET', '/v1/mcp/servers', undefined, AUTH)).body as any[];
      return JSON.stringify(statuses()) === JSON.stringify(expected);
    }, 20_000).catch(() => undefined); // the assertion below shows what was seen instead
    expect(statuses()).toEqual(expected);
    const notes = servers.find((s) => s.name === 'notes');
    expect(notes.tools).toEqual(expect.arrayContaining(['notes__read_note', 'notes__delete_everything']));
    expect(notes.error).toBeUndefined();
    expect(servers.find((s) => s.name === 'remote').tools).toEqual(['remote__lookup']);
    // The route is guarded like every /v1 route.
    expect((await api(app.url, 'GET', '/v1/mcp/servers')).status).toBe(401);
  });

  it('calls a read-only MCP tool and its result reaches the model', async () => {
    const { events, result } = await callOnce('notes__read_note', { title: 'shopping' });
    expect(timeline(events)).toEqual([
      'run_started',
      'start:notes__read_note',
      'step_finished',
      'result:notes__read_note',
      'text',
      'step_finished',
      'done',
    ]);
    expect(result).toMatchObject({ isError: false, content: 'Note "shopping": buy milk' });
    expect(offeredToolNames(upstream.requests[0])).toEqual(
      expect.arrayContaining(['read_file', 'notes__read_note', 'remote__lookup']),
    );
    expect(lastToolMessage(upstream.requests[1])).toEqual({
      role: 'tool',
      tool_call_id: 'call_1',
      content: 'Note "shopping": buy milk',
    });
  });

  it('validates arguments against the MCP schema (formats included) before the server sees them', async () => {
    const { result } = await callOnce('notes__read_note', { title: 'x', owner: 'not an email' });
    expect(result).toMatchObject({ isError: true, errorCode: 'INVALID_ARGUMENTS' });
    expect(result.content).toContain('owner');
  });

  it('calls a remote server over Streamable HTTP with the bearer token interpolated from the environment', async () => {
    const { result } = await callOnce('remote__lookup', { word: 'loop' });
    expect(result).toMatchObject({ isError: false, content: 'loop: a remote definition' });
    expect(remote.authorizations.length).toBeGreaterThan(0);
    expect(new Set(remote.authorizations)).toEqual(new Set([`Bearer ${REMOTE_TOKEN}`]));
  });

  (HAS_EVERYTHING ? it : it.skip)(
    'runs @modelcontextprotocol/server-everything unmodified, under TOOL_POLICY wildcards',
    async () => {
      const tools = (await api(app.url, 'GET', '/v1/tools', undefined, AUTH)).body as any[];
      const byName = new Map(tools.map((t) => [t.name, t]));
      // TOOL_POLICY: the server's wildcard denies, the tool's own entry wins.
      expect(byName.get('everything__echo')).toMatchObject({ source: 'mcp:everything', policy: 'allow' });
      expect(byName.get('everything__get-sum')).toMatchObject({ policy: 'deny' });
      // A tool that requires MCP tasks is not offered.
      expect(byName.has('everything__simulate-research-query')).toBe(false);
      const { result } = await callOnce('everything__echo', { message: 'hello' });
      expect(result).toMatchObject({ isError: false, content: 'Echo: hello' });
      expect(offeredToolNames(upstream.requests[0])).toContain('everything__echo');
      expect(offeredToolNames(upstream.requests[0])).not.toContain('everything__get-sum');
      const denied = await callOnce('everything__get-sum', { a: 1, b: 2 });
      expect(denied.result).toMatchObject({ isError: true, errorCode: 'PERMISSION_DENIED' });
    },
  );

  describe('a destructive tool in safe mode', () => {
    const marker = () => file('notes-marker.txt');

    async function untilApproval(): Promise<{ stream: OpenStream; runId: string; callId: string }> {
      upstream.enqueue(
        toolCalls([{ id: 'call_d', name: 'notes__delete_everything', arguments: { reason: 'cleanup' } }]),
        text('Done.'),
      );
      const stream = await chat({ prompt: 'delete everything' });
      const events = await stream.until('tool_approval_required');
      expect(events.at(-1)!.event).toBe('tool_approval_required');
      expect(events.at(-1)!.data.reason).toContain('delete_everything');
      return { stream, runId: events[0].data.runId, callId: 'call_d' };
    }

    it('does not run when the person rejects it', async () => {
      const before = lines(marker()).length;
      const { stream, runId, callId } = await untilApproval();
      const decided = await api(
        app.url,
        'POST',
        `/v1/runs/${runId}/tool-calls/${callId}/approval`,
        { approve: false, reason: 'no' },
        AUTH,
      );
      expect(decided.status).toBe(202);
      const rest = await stream.rest();
      expect(oneEvent(rest, 'tool_call_result', callId).data).toMatchObject({
        isError: true,
        errorCode: 'REJECTED',
      });
      expect(lines(marker()).length).toBe(before);
    });

    it('runs exactly once when the person approves it', async () => {
      const before = lines(marker()).length;
      const { stream, runId, callId } = await untilApproval();
      expect(lines(marker()).length).toBe(before);
      const decided = await api(
        app.url,
        'POST',
        `/v1/runs/${runId}/tool-calls/${callId}/approval`,
        { approve: true },
        AUTH,
      );
      expect(decided.status).toBe(202);
      const rest = await stream.rest();
      expect(oneEvent(rest, 'tool_call_result', callId).data).toMatchObject({
        isError: false,
        content: 'Everything deleted.',
      });
      expect(lines(marker()).slice(before)).toEqual(['cleanup']);
    });
  });

  it('lets another replica, with its own connection, run an approved MCP call of a run it did not start', async () => {
    // The same server under the same name, writing its own marker: which process ran the call shows.
    const notes = JSON.parse(readFileSync(file('mcp.json'), 'utf8')).mcpServers.notes;
    notes.env.MARKER_FILE = file('replica-marker.txt');
    notes.env.START_FILE = file('replica-start.txt');
    writeFileSync(file('replica.json'), JSON.stringify({ mcpServers: { notes } }));
    const other = await startApp(
      {
        OPENAI_BASE_URL: upstream.baseUrl,
        API_KEYS: `tester:${KEY}`,
        MCP_CONFIG: file('replica.json'),
        REMOTE_TOKEN,
      },
      app.databaseUrl,
    );
    try {
      await eventually(async () => {
        const servers = (await api(other.url, 'GET', '/v1/mcp/servers', undefined, AUTH)).body as any[];
        return servers[0]?.status === 'connected';
      });
      const marker = file('notes-marker.txt');
      const before = lines(marker).length;
      upstream.enqueue(
        toolCalls([{ id: 'call_r', name: 'notes__delete_everything', arguments: { reason: 'replica' } }]),
        text('Done.'),
      );
      const stream = await chat({ prompt: 'delete everything' });
      const head = await stream.until('tool_approval_required');
      const runId = head[0].data.runId;
      const decided = await api(
        other.url,
        'POST',
        `/v1/runs/${runId}/tool-calls/call_r/approval`,
        { approve: true },
        AUTH,
      );
      expect(decided.status).toBe(202);
      const rest = await stream.rest();
      expect(oneEvent(rest, 'tool_call_result', 'call_r').data).toMatchObject({
        isError: false,
        content: 'Everything deleted.',
      });
      expect(rest.at(-1)!.data).toMatchObject({ status: 'completed' });
      expect(lines(file('replica-marker.txt'))).toEqual(['replica']);
      expect(lines(marker).length).toBe(before);
    } finally {
      await other.close();
    }
  });

  it('turns isError into an MCP_TOOL_ERROR result and the run goes on', async () => {
    const { events, result } = await callOnce('notes__fail');
    expect(result).toMatchObject({
      isError: true,
      errorCode: 'MCP_TOOL_ERROR',
      content: 'The quota is exhausted.',
    });
    expect(events.at(-1)!.data).toMatchObject({ status: 'completed' });
  });

  it('describes images and resources instead of sending base64, and appends structured content as JSON', async () => {
    const image = await callOnce('notes__snapshot');
    expect(image.result.content).toBe(
      'Here is the picture.\n[image image/png, 12 KB]\n[resource file:///notes/a.txt]\nresource text',
    );
    const weather = await callOnce('notes__weather');
    expect(weather.result.content).toBe('Sunny and mild.\n{"temperature":21.5,"sky":"clear"}');
    expect(lastToolMessage(upstream.requests.at(-1)!)!.content).toBe(weather.result.content);
  });

  it('streams progress as tool_call_output, and a cancel reaches the MCP server', async () => {
    const cancelFile = file('notes-cancel.txt');
    const before = lines(cancelFile).length;
    upstream.enqueue(toolCalls([{ id: 'call_s', name: 'notes__slow', arguments: {} }]), text('never'));
    const stream = await chat({ prompt: 'be slow' });
    const outputs: StreamEvent[] = [];
    const head = await stream.until((e) => {
      if (e.event === 'tool_call_output') outputs.push(e);
      return outputs.length === 2;
    });
    expect(outputs.map((o) => [o.data.toolCallId, o.data.stream, o.data.chunk])).toEqual([
      ['call_s', 'stdout', 'warming up'],
      ['call_s', 'stdout', 'progress 2/3'],
    ]);
    const runId = head[0].data.runId;
    expect((await api(app.url, 'POST', `/v1/runs/${runId}/cancel`, undefined, AUTH)).status).toBe(202);
    const rest = await stream.rest();
    expect(oneEvent(rest, 'tool_call_result', 'call_s').data).toMatchObject({
      isError: true,
      errorCode: 'CANCELLED',
    });
    expect(rest.at(-1)!.data).toMatchObject({ status: 'cancelled' });
    await eventually(() => lines(cancelFile).length === before + 1);
  });

  it('stops a call at the server timeout and sends the cancellation to the server', async () => {
    const cancelFile = file('slowpoke-cancel.txt');
    const before = lines(cancelFile).length;
    const { events, result } = await callOnce('slowpoke__slow');
    expect(result).toMatchObject({ isError: true, errorCode: 'TIMEOUT' });
    expect(events.at(-1)!.data).toMatchObject({ status: 'completed' });
    await eventually(() => lines(cancelFile).length === before + 1);
  });

  it('keeps a server that fails to start out of the way: failed with its error, ready, calls MCP_UNAVAILABLE', async () => {
    const servers = (await api(app.url, 'GET', '/v1/mcp/servers', undefined, AUTH)).body as any[];
    const broken = servers.find((s) => s.name === 'broken');
    expect(broken).toMatchObject({ status: expect.stringMatching(/failed|connecting/), tools: [] });
    await eventually(async () => {
      const now = (await api(app.url, 'GET', '/v1/mcp/servers', undefined, AUTH)).body as any[];
      return String(now.find((s) => s.name === 'broken').error ?? '').includes('refuses to start');
    });
    expect((await fetch(`${app.url}/health/ready`)).status).toBe(200);
    const tools = (await api(app.url, 'GET', '/v1/tools', undefined, AUTH)).body as any[];
    expect(tools.filter((t) => t.source === 'mcp:broken')).toEqual([]);
    const { events, result } = await callOnce('broken__anything');
    expect(result).toMatchObject({ isError: true, errorCode: 'MCP_UNAVAILABLE' });
    expect(events.at(-1)!.data).toMatchObject({ status: 'completed' });
  });

  it('answers a call in flight when its server crashes with MCP_UNAVAILABLE, then reconnects', async () => {
    const starts = file('crashy-start.txt');
    const before = lines(starts).length;
    const { result } = await callOnce('crashy__crash');
    expect(result).toMatchObject({ isError: true, errorCode: 'MCP_UNAVAILABLE' });
    await eventually(async () => {
      const servers = (await api(app.url, 'GET', '/v1/mcp/servers', undefined, AUTH)).body as any[];
      return lines(starts).length > before && servers.find((s) => s.name === 'crashy').status === 'connected';
    }, 20_000);
    const again = await callOnce('crashy__read_note', { title: 'after' });
    expect(again.result).toMatchObject({ isError: false, content: 'Note "after": buy milk' });
  });

  it('notices a remote server that went away, answers MCP_UNAVAILABLE, and reconnects when it is back', async () => {
    const port = Number(new URL(flaky.url).port);
    await flaky.close();
    const { result } = await callOnce('flaky__lookup', { word: 'gone' });
    expect(result).toMatchObject({ isError: true, errorCode: 'MCP_UNAVAILABLE' });
    const status = async () =>
      ((await api(app.url, 'GET', '/v1/mcp/servers', undefined, AUTH)).body as any[]).find(
        (s) => s.name === 'flaky',
      );
    expect((await status()).status).not.toBe('connected');
    expect((await status()).tools).toEqual([]);
    flaky = await startMcpHttpServer(REMOTE_TOKEN, port);
    await eventually(async () => (await status()).status === 'connected', 20_000);
    upstream.reset();
    const again = await callOnce('flaky__lookup', { word: 'back' });
    expect(again.result).toMatchObject({ isError: false, content: 'back: a remote definition' });
  });

  it('refreshes the tool list when the server says it changed', async () => {
    const listed = async () =>
      ((await api(app.url, 'GET', '/v1/tools', undefined, AUTH)).body as any[]).map((t) => t.name);
    expect(await listed()).not.toContain('notes__late');
    await callOnce('notes__add_tool');
    await eventually(async () => (await listed()).includes('notes__late'));
    upstream.reset();
    const { result } = await callOnce('notes__late');
    expect(result).toMatchObject({ isError: false, content: 'late tool ran' });
    expect(offeredToolNames(upstream.requests[0])).toContain('notes__late');
  });

  it('refuses a client tool that takes the name of an offered MCP tool', async () => {
    const res = await api(
      app.url,
      'POST',
      '/v1/sessions',
      {
        clientTools: [
          { type: 'function', function: { name: 'notes__read_note', parameters: { type: 'object' } } },
        ],
      },
      AUTH,
    );
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('clashes');
  });

  it('gives a stdio server only the minimal environment plus its env, none of the service secrets', async () => {
    const { result } = await callOnce('notes__environment');
    const env = JSON.parse(result.content) as Record<string, string>;
    const allowed = [
      'HOME',
      'LOGNAME',
      'PATH',
      'SHELL',
      'TERM',
      'USER',
      'MARKER_FILE',
      'CANCEL_FILE',
      'START_FILE',
    ];
    expect(Object.keys(env).filter((k) => !allowed.includes(k))).toEqual([]);
    expect(env.MARKER_FILE).toBe(file('notes-marker.txt'));
    const values = Object.values(env).join('\n');
    for (const secret of ['sk-canary', KEY, app.databaseUrl, REMOTE_TOKEN])
      expect(values).not.toContain(secret);
  });

  it('counts MCP calls by server in the metrics', async () => {
    const metrics = await (await fetch(`${app.url}/metrics`)).text();
    expect(metrics).toMatch(/loopwright_mcp_calls_total\{server="notes"\} [1-9]/);
    expect(metrics).toMatch(/loopwright_mcp_call_errors_total\{server="notes",code="MCP_TOOL_ERROR"\} [1-9]/);
    expect(metrics).toMatch(/loopwright_mcp_call_duration_seconds_count\{server="remote"\} [1-9]/);
  });
  // Last: it shuts the app down.
  it('stops its stdio servers when the service shuts down', async () => {
    const pids = ['notes', 'slowpoke', 'crashy'].map((name) =>
      Number(lines(file(`${name}-start.txt`)).at(-1)),
    );
    expect(pids.every((pid) => isRunning(pid))).toBe(true);
    closed = true;
    await app.close();
    await eventually(() => pids.every((pid) => !isRunning(pid)));
  });
});
