import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/config/app-config';
import { scrubSecrets, SECRET_VARIABLES, shownUrl } from '../../src/config/secret-variables';
import { PROVIDERS } from '../../src/llm/providers';
import { checkUpstream } from '../../src/llm/upstream-check';

const PASSWORD = 'pw-never-shown-9731';

function refusal(env: Record<string, string>): string {
  try {
    loadConfig(env, '/srv');
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('the secret variables (one declaration, read by every refusal and by run_command)', () => {
  // Each refused value of a secret-bearing variable: the message names the variable, never the secret.
  it.each([
    ['API_KEYS', `alice${PASSWORD}`],
    ['API_KEYS', `alice:${PASSWORD},bob:${PASSWORD}`],
    ['LLM_HEADERS', `{"authorization":"Bearer ${PASSWORD}"`],
    ['DATABASE_URL', `mysql://app:${PASSWORD}@db.internal/loopwright`],
    ['OPENAI_BASE_URL', `ftp://user:${PASSWORD}@router.example.com/v1`],
    ['OPENAI_BASE_URL', `https://user:${PASSWORD}@router.example.com:port/v1`],
    ['OPENAI_BASE_URL', `ftp://router.example.com/v1?api_key=${PASSWORD}`],
    ['ANTHROPIC_BASE_URL', `ftp://user:${PASSWORD}@proxy.example.com`],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', `ftp://user:${PASSWORD}@collector.example.com`],
    ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', `ftp://user:${PASSWORD}@collector.example.com/v1/traces`],
    ['OTEL_EXPORTER_OTLP_HEADERS', `authorization${PASSWORD}`],
    ['OTEL_EXPORTER_OTLP_TRACES_HEADERS', `x-key${PASSWORD}`],
  ])('refuses a bad %s without quoting its secret', (variable, value) => {
    // The OTLP headers are read when an endpoint is set.
    const message = refusal({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', [variable]: value });
    expect(message).toContain(`${variable}=`);
    expect(message).not.toContain(PASSWORD);
  });

  it('refuses an ADMIN_KEYS name that names no key without quoting the variable', () => {
    const message = refusal({ API_KEYS: 'alice:a-secret-1', ADMIN_KEYS: PASSWORD });
    expect(message).toMatch(/^ADMIN_KEYS="<redacted>" is not accepted/);
  });

  it('shows a refused URL without its credentials but with where it points', () => {
    expect(refusal({ DATABASE_URL: `mysql://app:${PASSWORD}@db.internal/x` })).toContain(
      'DATABASE_URL="mysql://db.internal/x"',
    );
    expect(shownUrl(`https://u:p@ss@host:8443/v1?api-version=1&key=${PASSWORD}#f`)).toBe(
      'https://host:8443/v1?api-version=1&key=<redacted>#f',
    );
  });

  it('never passes a secret variable to run_command, even when RUN_COMMAND_ENV names it', () => {
    const names = Object.keys(SECRET_VARIABLES);
    const env: Record<string, string> = Object.fromEntries(names.map((n) => [n, 'x']));
    const config = loadConfig({
      ...env,
      API_KEYS: 'alice:one-secret',
      ADMIN_KEYS: 'alice',
      DATABASE_URL: 'postgres://u:p@db/x',
      OPENAI_BASE_URL: 'https://u:p@router/v1',
      ANTHROPIC_BASE_URL: 'https://u:p@proxy',
      AZURE_OPENAI_BASE_URL: 'https://u:p@resource.openai.azure.com/openai/v1',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'https://u:p@collector',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://u:p@collector/v1/traces',
      OTEL_EXPORTER_OTLP_HEADERS: 'a=b',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'a=b',
      LLM_HEADERS: '{"x-a":"b"}',
      HOST: '0.0.0.0',
      CI: 'true',
      RUN_COMMAND_ENV: [...names, 'CI'].join(','),
    });
    expect(Object.keys(config.commandEnv).filter((n) => names.includes(n))).toEqual([]);
    expect(config.commandEnv.CI).toBe('true');
  });

  it("keeps every provider's declared secret from run_command", () => {
    const secrets = PROVIDERS.flatMap((p) => [`${p.endpoint.name}_API_KEY`, `${p.endpoint.name}_BASE_URL`]);
    expect(secrets).toEqual(expect.arrayContaining(['OPENAI_API_KEY', 'ANTHROPIC_API_KEY']));
    const env = Object.fromEntries(secrets.map((n) => [n, 'https://secret.example.com']));
    const config = loadConfig({ ...env, RUN_COMMAND_ENV: secrets.join(',') });
    for (const name of secrets) expect(config.commandEnv).not.toHaveProperty(name);
  });

  it('keeps a variable MCP_CONFIG substitutes into a server from run_command', () => {
    const dir = mkdtempSync(join(tmpdir(), 'loopwright-secret-mcp-'));
    const file = join(dir, 'mcp.json');
    writeFileSync(
      file,
      JSON.stringify({
        mcpServers: {
          issues: {
            url: 'https://mcp.example.com/mcp',
            headers: { Authorization: 'Bearer ${ISSUES_TOKEN}' },
          },
          files: { command: 'npx', args: ['pkg'], env: { TOKEN: '${FILES_TOKEN}' } },
        },
      }),
    );
    const config = loadConfig(
      {
        MCP_CONFIG: file,
        ISSUES_TOKEN: PASSWORD,
        FILES_TOKEN: PASSWORD,
        CI: 'true',
        RUN_COMMAND_ENV: 'ISSUES_TOKEN,FILES_TOKEN,CI',
      },
      dir,
    );
    expect(config.commandEnv).toMatchObject({ CI: 'true' });
    expect(JSON.stringify(config.commandEnv)).not.toContain(PASSWORD);
  });
});

describe('the configured secret values, taken out of what an upstream quotes', () => {
  it('finds each secret where its variable holds it, and replaces it in text', () => {
    const config = loadConfig({
      API_KEYS: 'alice:alice-secret-1,bob:bob-secret-2',
      ADMIN_KEYS: 'alice',
      OPENAI_API_KEY: 'sk-openai-secret',
      LLM_HEADERS: '{"x-team":"header-secret"}',
      OPENAI_BASE_URL: 'https://router:url-password@router.example.com/v1?api_key=query-secret',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-otlp=otlp%20secret',
    });
    expect([...config.secretValues].sort()).toEqual(
      [
        'alice-secret-1',
        'bob-secret-2',
        'sk-openai-secret',
        'header-secret',
        'url-password',
        'query-secret',
        'otlp%20secret',
        'otlp secret',
      ].sort(),
    );
    expect(
      scrubSecrets(
        'refused: {"authorization":"Bearer sk-openai-secret","x-team":"header-secret"} for alice',
        config.secretValues,
      ),
    ).toBe('refused: {"authorization":"Bearer <redacted>","x-team":"<redacted>"} for alice');
  });
});

describe('the start-up check of an upstream whose base URL carries credentials', () => {
  it('sends them as the providers do, and never says them', async () => {
    let seen: string | undefined;
    const upstream = createServer((req, res) => {
      seen = req.headers.authorization;
      res.writeHead(req.headers.authorization === undefined ? 401 : 200).end('{}');
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const address = upstream.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    try {
      const base = `http://user:${PASSWORD}@127.0.0.1:${port}/v1?key=${PASSWORD}`;
      expect(await checkUpstream({ provider: 'openai', baseUrl: base, apiKey: null })).toBeNull();
      expect(seen).toBe(`Basic ${Buffer.from(`user:${PASSWORD}`).toString('base64')}`);
      const unreachable = await checkUpstream({
        provider: 'openai',
        baseUrl: `http://user:${PASSWORD}@127.0.0.1:1/v1?token=${PASSWORD}`,
        apiKey: null,
      });
      expect(unreachable).toContain('could not be reached');
      expect(unreachable).toContain('127.0.0.1:1/v1');
      expect(unreachable).not.toContain(PASSWORD);
    } finally {
      await new Promise((r) => upstream.close(r));
    }
  });
});
