import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/config/app-config';

/** loadConfig with MCP_CONFIG pointing at a file holding `servers` as its mcpServers. */
function withServers(servers: unknown, env: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'loopwright-mcp-config-'));
  const file = join(dir, 'mcp.json');
  writeFileSync(file, JSON.stringify({ mcpServers: servers }));
  return () => loadConfig({ MCP_CONFIG: file, ...env }, dir);
}

describe('MCP_CONFIG', () => {
  it('reads stdio and http servers, interpolating ${VAR} from the environment given to loadConfig', () => {
    const config = withServers(
      {
        files: {
          command: 'npx',
          args: ['-y', 'pkg', '${DATA}'],
          env: { LOG: '1' },
          cwd: 'srv',
          tools: ['read'],
        },
        issues: {
          url: 'https://mcp.example.com/mcp',
          headers: { Authorization: 'Bearer ${ISSUES_TOKEN}' },
          timeoutMs: 120_000,
        },
      },
      {
        DATA: '/data',
        ISSUES_TOKEN: 'tok',
        HOME: '/home/x',
        PATH: '/bin',
        OPENAI_API_KEY: 'sk-secret',
        EMPTY: '',
      },
    )();
    expect(config.mcpServers).toEqual([
      {
        name: 'files',
        transport: 'stdio',
        command: 'npx',
        args: ['-y', 'pkg', '/data'],
        env: { HOME: '/home/x', PATH: '/bin', LOG: '1' },
        cwd: expect.stringMatching(/\/srv$/),
        tools: ['read'],
        timeoutMs: 30_000,
      },
      {
        name: 'issues',
        transport: 'http',
        url: 'https://mcp.example.com/mcp',
        headers: { Authorization: 'Bearer tok' },
        tools: null,
        timeoutMs: 120_000,
      },
    ]);
  });

  it('counts an empty variable as set', () => {
    const config = withServers({ a: { command: 'x', env: { V: '${EMPTY}' } } }, { EMPTY: '' })();
    expect(config.mcpServers[0]).toMatchObject({ env: { V: '' } });
  });

  it('stops start-up naming a missing ${VAR}', () => {
    const load = withServers({
      issues: { url: 'https://x/mcp', headers: { Authorization: 'Bearer ${ISSUES_TOKEN}' } },
    });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(/^MCP_CONFIG=.*ISSUES_TOKEN is not set/);
    expect(load).toThrow(/mcpServers\.issues\.headers\.Authorization/);
  });

  it('never interpolates a secret of the server', () => {
    const load = withServers(
      { a: { command: 'x', env: { K: '${OPENAI_API_KEY}' } } },
      { OPENAI_API_KEY: 'sk' },
    );
    expect(load).toThrow(/\$\{OPENAI_API_KEY\}, a secret of this server/);
  });

  it.each([
    ['a bad server name', { 'bad name': { command: 'x' } }, /server names must match/],
    ['neither command nor url', { a: {} }, /exactly one of "command" or "url"/],
    ['both command and url', { a: { command: 'x', url: 'http://h' } }, /exactly one/],
    [
      'a timeoutMs below 1000',
      { a: { command: 'x', timeoutMs: 999 } },
      /timeoutMs must be an integer from 1000/,
    ],
    ['a url that is not http', { a: { url: 'ftp://h' } }, /url must be an http/],
    ['args that are not strings', { a: { command: 'x', args: [1] } }, /args must be an array of strings/],
    ['servers whose tool names could collide', { a: { command: 'x' }, a__b: { command: 'y' } }, /same name/],
  ])('refuses %s', (_label, servers, message) => {
    const load = withServers(servers);
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(message);
  });

  it('refuses a file that is not JSON or has no mcpServers', () => {
    const dir = mkdtempSync(join(tmpdir(), 'loopwright-mcp-config-'));
    writeFileSync(join(dir, 'bad.json'), '{ nope');
    writeFileSync(join(dir, 'empty.json'), '{}');
    expect(() => loadConfig({ MCP_CONFIG: 'bad.json' }, dir)).toThrow(/not JSON/);
    expect(() => loadConfig({ MCP_CONFIG: 'empty.json' }, dir)).toThrow(/"mcpServers" object/);
    expect(() => loadConfig({ MCP_CONFIG: 'missing.json' }, dir)).toThrow(/cannot be read/);
  });

  it('lets TOOL_POLICY name <server>__* for a configured server only', () => {
    const ok = withServers({ files: { command: 'x' } }, { TOOL_POLICY: 'files__*=deny,files__read=allow' })();
    expect(ok.toolPolicy).toEqual({ 'files__*': 'deny', files__read: 'allow' });
    expect(withServers({ files: { command: 'x' } }, { TOOL_POLICY: 'other__*=deny' })).toThrow(
      /^TOOL_POLICY=/,
    );
    expect(() => loadConfig({ TOOL_POLICY: 'read_*=deny' })).toThrow(/^TOOL_POLICY=/);
  });

  it('is empty without MCP_CONFIG', () => {
    expect(loadConfig({}).mcpServers).toEqual([]);
  });
});
