import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createTestDatabase, serverUrl } from '../support/database';
import { eventually } from '../support/eventually';
import { anthropicText, FakeAnthropic } from '../support/fake-anthropic';
import { FakeUpstream, status, text, toolCalls } from '../support/fake-upstream';
import { OtlpReceiver } from '../support/otlp-receiver';
import { spawnServer, type ServerProcess } from '../support/server-process';
import { api, openStream, type StreamEvent } from '../support/sse-client';

/** A value no test data contains by chance. */
const secret = (name: string) => `${name}-${randomBytes(9).toString('hex')}`;

const SECRETS = {
  aliceKey: secret('alice-key'),
  opsKey: secret('ops-key'),
  openaiKey: secret('sk-openai'),
  anthropicKey: secret('sk-ant'),
  openaiUrlPassword: secret('openai-url-pw'),
  anthropicUrlPassword: secret('anthropic-url-pw'),
  header: secret('llm-header'),
  databasePassword: secret('db-pw'),
  otlpUrlPassword: secret('otlp-url-pw'),
  otlpHeader: secret('otlp-header'),
};

function bwrapWorks(): boolean {
  try {
    execFileSync('bwrap', ['--ro-bind', '/', '/', '--unshare-all', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Every secret the configuration can hold, configured at once, the server started as a process and
 * used (models, runs on both providers, an upstream error that quotes the request, a command that
 * prints its environment): no response body, log line or exported span holds any of them.
 */
describe('no configured secret is ever shown (e2e)', () => {
  let upstream: FakeUpstream;
  let anthropic: FakeAnthropic;
  let collector: OtlpReceiver;
  let server: ServerProcess;
  const bodies: string[] = [];
  const auth = { authorization: `Bearer ${SECRETS.aliceKey}` };

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    anthropic = await FakeAnthropic.start();
    collector = await OtlpReceiver.start();
    // A role whose password is a secret of its own: DATABASE_URL carries it.
    const database = new URL(await createTestDatabase());
    const admin = await connect(serverUrl());
    const role = `lw_${randomBytes(6).toString('hex')}`;
    try {
      await admin.query(`CREATE ROLE ${role} LOGIN SUPERUSER PASSWORD '${SECRETS.databasePassword}'`);
    } finally {
      await admin.end();
    }
    database.username = role;
    database.password = SECRETS.databasePassword;
    const withPassword = (base: string, user: string, password: string) => {
      const url = new URL(base);
      url.username = user;
      url.password = password;
      return url.toString().replace(/\/$/, '');
    };
    server = await spawnServer({
      DATABASE_URL: database.toString(),
      API_KEYS: `alice:${SECRETS.aliceKey},ops:${SECRETS.opsKey}`,
      ADMIN_KEYS: 'ops',
      OPENAI_API_KEY: SECRETS.openaiKey,
      OPENAI_BASE_URL: withPassword(upstream.baseUrl, 'router', SECRETS.openaiUrlPassword),
      ANTHROPIC_API_KEY: SECRETS.anthropicKey,
      ANTHROPIC_BASE_URL: withPassword(anthropic.baseUrl, 'proxy', SECRETS.anthropicUrlPassword),
      LLM_HEADERS: JSON.stringify({ 'x-team-secret': SECRETS.header }),
      LLM_MODEL: 'test-model',
      OTEL_EXPORTER_OTLP_ENDPOINT: withPassword(collector.endpoint, 'otlp', SECRETS.otlpUrlPassword),
      OTEL_EXPORTER_OTLP_HEADERS: `x-otlp-key=${SECRETS.otlpHeader}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      WORKSPACE_ROOT: mkdtempSync(join(tmpdir(), 'loopwright-secrets-')),
      ENABLE_RUN_COMMAND: 'true',
      TOOL_POLICY: 'run_command=allow',
      // Every secret variable asked for by name: none may reach a command.
      RUN_COMMAND_ENV:
        'API_KEYS,ADMIN_KEYS,OPENAI_API_KEY,ANTHROPIC_API_KEY,OPENAI_BASE_URL,ANTHROPIC_BASE_URL,LLM_HEADERS,DATABASE_URL,OTEL_EXPORTER_OTLP_ENDPOINT,OTEL_EXPORTER_OTLP_HEADERS',
      LOG_FORMAT: 'pretty',
      LOG_LEVEL: 'debug',
    });
  });
  afterAll(async () => {
    await server?.kill('SIGTERM');
    await Promise.all([upstream.close(), anthropic.close(), collector.close()]);
  });

  async function call(method: string, path: string, body?: unknown) {
    const res = await api(server.url, method, path, body, auth);
    bodies.push(JSON.stringify(res.body));
    return res;
  }

  async function run(body: Record<string, unknown>): Promise<StreamEvent[]> {
    const stream = await openStream(`${server.url}/v1/chat`, { body, headers: auth });
    const events = await stream.rest(20_000);
    bodies.push(JSON.stringify(events), JSON.stringify(stream.errorBody));
    return events;
  }

  it('shows none of them in answers, logs or spans', async () => {
    const models = await call('GET', '/v1/models');
    expect(models.status).toBe(200);
    expect(models.body.providers).toEqual(
      expect.arrayContaining([
        { name: 'openai', baseUrl: upstream.baseUrl },
        { name: 'anthropic', baseUrl: anthropic.baseUrl },
      ]),
    );

    upstream.enqueue(text('Hello.'));
    const answered = await run({ prompt: 'Say hello' });
    expect(answered.at(-1)?.data.status).toBe('completed');
    // The credentials of the base URL and the headers are still used as given.
    expect(upstream.requests[0].headers['x-team-secret']).toBe(SECRETS.header);

    anthropic.enqueue(anthropicText('Hello from Claude.'));
    const claude = await run({ prompt: 'Say hello', model: 'anthropic/claude-test' });
    expect(claude.at(-1)?.data.status).toBe('completed');

    // An upstream whose error quotes the request it refused, headers and all.
    upstream.enqueue((request) =>
      status(400, {
        error: {
          message: `Invalid request ${JSON.stringify(request.headers)}`,
          type: 'invalid_request_error',
          code: null,
        },
      }),
    );
    const failed = await run({ prompt: 'Fail' });
    expect(failed.at(-1)).toMatchObject({ event: 'error', data: { code: 'UPSTREAM_BAD_REQUEST' } });
    const runId = failed[0].data.runId as string;
    await call('GET', `/v1/runs/${runId}`);
    await call('GET', `/v1/runs/${runId}/events`);

    const tools = await call('GET', '/v1/tools');
    if (bwrapWorks() && (tools.body as { name: string }[]).some((t) => t.name === 'run_command')) {
      upstream.enqueue(
        toolCalls([{ id: 'env-1', name: 'run_command', arguments: { command: 'env' } }]),
        text('Printed.'),
      );
      const command = await run({ prompt: 'Print the environment', mode: 'exec' });
      const output = command
        .filter((e) => e.event === 'tool_call_output' || e.event === 'tool_call_end')
        .map((e) => JSON.stringify(e.data))
        .join('');
      expect(output).toContain('PATH=');
      for (const name of ['ADMIN_KEYS', 'ANTHROPIC_API_KEY', 'LLM_HEADERS', 'OTEL_EXPORTER_OTLP_HEADERS']) {
        expect(output).not.toContain(`${name}=`);
      }
    }
    await call('GET', '/v1/usage');

    await eventually(() => collector.spans.some((s) => s.name === 'invoke_agent'), 15_000);
    const haystacks = {
      bodies: bodies.join('\n'),
      output: server.output(),
      spans: JSON.stringify(collector.spans),
    };
    expect(haystacks.output).toContain('Loopwright is ready');
    const found = Object.entries(haystacks).flatMap(([where, text]) =>
      Object.entries(SECRETS)
        .filter(([, value]) => text.includes(value))
        .map(([name]) => `${name} in ${where}`),
    );
    expect(found).toEqual([]);
  });
});
