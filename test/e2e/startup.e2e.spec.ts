import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase } from '../support/database';
import { spawnServer, type ServerProcess } from '../support/server-process';

const MAIN = join(__dirname, '../../dist/main.js');
const KEY = 'sk-test-never-printed-1234';

/** What `node dist/main.js` says when it starts (and when it cannot): the banner, its warnings, a port in use. */
describe('start-up (e2e)', () => {
  let upstream: Server;
  let upstreamUrl: string;
  let env: Record<string, string>;
  const servers: ServerProcess[] = [];

  beforeAll(async () => {
    // A model upstream that refuses every key, as a wrong OPENAI_API_KEY would be refused.
    upstream = createServer((_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"Incorrect API key provided"}}');
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const address = upstream.address();
    upstreamUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/v1`;
    env = {
      DATABASE_URL: await createTestDatabase(),
      OPENAI_BASE_URL: upstreamUrl,
      OPENAI_API_KEY: KEY,
      WORKSPACE_ROOT: mkdtempSync(join(tmpdir(), 'loopwright-start-')),
      LOG_LEVEL: 'info',
    };
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.kill('SIGKILL')));
  });
  afterAll(async () => {
    await new Promise((r) => upstream.close(r));
  });

  async function outputOnceSaid(server: ServerProcess, text: string): Promise<string> {
    const deadline = Date.now() + 10_000;
    while (!server.output().includes(text) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    return server.output();
  }

  it('prints a readable banner with the URLs, model, database, workspace, tools and what is off, and warns about a refused key', async () => {
    const server = await spawnServer({ ...env, LOG_FORMAT: 'pretty' });
    servers.push(server);
    const out = await outputOnceSaid(server, 'refused the API key');

    expect(out).toContain(`Playground   ${server.url}/`);
    expect(out).toContain(`API docs     ${server.url}/docs`);
    expect(out).toContain(`API          ${server.url}/v1`);
    expect(out).toMatch(
      new RegExp(`Model .*gpt-4\\.1-mini \\(provider openai, ${upstreamUrl.replace(/[.]/g, '\\.')}\\)`),
    );
    expect(out).toMatch(/Database +PostgreSQL at 127\.0\.0\.1:\d+\/\S+ as postgres/);
    expect(out).toContain(env.WORKSPACE_ROOT);
    expect(out).toContain('WORKSPACE_SCOPE=shared');
    expect(out).toMatch(/Tools run +.*read_file/);
    expect(out).toMatch(/Tools ask +.*write_file/);
    expect(out).toContain('run_command (shell commands) is off: ENABLE_RUN_COMMAND=true turns it on.');
    expect(out).toContain(`Warning: the openai upstream at ${upstreamUrl} refused the API key (HTTP 401)`);
    // Never the key, never a password, never Nest's line per module and route.
    expect(out).not.toContain(KEY);
    expect(out).not.toContain('postgres:postgres@');
    expect(out).not.toMatch(/InstanceLoader|RoutesResolver|Mapped \{/);
  });

  it('says what is off without a key, and logs the banner as one JSON line with LOG_FORMAT=json', async () => {
    const { OPENAI_API_KEY: _, ...withoutKey } = env;
    const server = await spawnServer({ ...withoutKey, OPENAI_API_KEY: '', LOG_FORMAT: 'json' });
    servers.push(server);
    const out = await outputOnceSaid(server, '"urls"');
    const banner = out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { urls?: Record<string, string>; off?: string[] })
      .find((l) => l.urls !== undefined);
    expect(banner?.urls).toEqual({
      api: `${server.url}/v1`,
      playground: `${server.url}/`,
      docs: `${server.url}/docs`,
    });
    expect(banner?.off?.[0]).toMatch(/^OPENAI_API_KEY is not set/);
    expect(out).not.toContain('Loopwright is ready');
  });

  it('refuses a port in use with one line naming PORT, no stack trace and no "successfully started"', async () => {
    const first = await spawnServer(env);
    servers.push(first);
    const port = new URL(first.url).port;
    const child = spawn(process.execPath, [MAIN], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/tmp',
        ...env,
        PORT: port,
        HOST: '127.0.0.1',
        LOG_FORMAT: 'pretty',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((done) => child.once('exit', done));

    expect(code).toBe(1);
    expect(out.trim()).toBe(
      `Loopwright cannot start: PORT=${port} on HOST=127.0.0.1 is already in use (another Loopwright?). Stop that process or set PORT to a free port.`,
    );
  });
});
