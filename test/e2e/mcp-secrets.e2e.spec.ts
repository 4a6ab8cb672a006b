import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startApp, type TestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { api } from '../support/sse-client';

const TEST_SERVER = resolve(__dirname, '../support/mcp-test-server.mjs');
const KEY = 'mcp-secrets-key';
const AUTH = { authorization: `Bearer ${KEY}` };
const TOKEN = 'mcp-token-5f1e9c2a7b';

/**
 * What an MCP server says about itself reaches `GET /v1/mcp/servers` (its last stderr line when it
 * will not start): a secret MCP_CONFIG gave it is taken out first, as from every log line.
 */
describe('MCP servers never show a configured secret (e2e)', () => {
  let app: TestApp;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loopwright-mcp-secrets-'));
    writeFileSync(
      join(dir, 'mcp.json'),
      JSON.stringify({
        mcpServers: {
          talkative: {
            command: process.execPath,
            args: [TEST_SERVER],
            env: { FAIL_AT_START: '1', ENV_TOKEN: '${MCP_TOKEN}' },
          },
        },
      }),
    );
    app = await startApp({
      API_KEYS: `tester:${KEY}`,
      MCP_CONFIG: join(dir, 'mcp.json'),
      MCP_TOKEN: TOKEN,
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: dir,
    });
  });

  afterAll(async () => {
    await app?.close();
  });

  it('shows why a server failed without the token it was given', async () => {
    let failed: { status: string; error?: string } | undefined;
    await eventually(async () => {
      const servers = (await api(app.url, 'GET', '/v1/mcp/servers', undefined, AUTH)).body as {
        name: string;
        status: string;
        error?: string;
      }[];
      failed = servers.find((s) => s.name === 'talkative');
      return failed?.status === 'failed';
    });
    expect(failed?.error).toContain('this server refuses to start with token');
    expect(failed?.error).not.toContain(TOKEN);
  });
});
