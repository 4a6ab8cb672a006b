import { ConfigError, loadConfig } from '../../src/config/app-config';

describe('loadConfig', () => {
  it('gives the contract defaults with an empty environment', () => {
    const c = loadConfig({}, '/srv');
    expect(c).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      databaseUrl: null,
      dataDir: '/srv/.data',
      workspaceRoot: '/srv/workspace',
      apiKeys: null,
      maxIterations: 10,
      toolTimeoutMs: 30_000,
      approvalTimeoutMs: 600_000,
      onDisconnect: 'continue',
      enableRunCommand: false,
      runCommandMaxTimeoutMs: 600_000,
      readMaxBytes: 262_144,
      bodyLimitBytes: 1_048_576,
      rateLimitRunsPerMinute: 120,
      maxActiveRunsPerKey: 16,
      shutdownGraceMs: 10_000,
      runLeaseMs: 10_000,
      runMaxResumes: 3,
      contextTokens: 128_000,
      compactAt: 0.8,
    });
    expect(loadConfig({ COMPACT_AT: '.5', LLM_CONTEXT_TOKENS: '16000' })).toMatchObject({
      compactAt: 0.5,
      contextTokens: 16_000,
    });
    expect(c.llm.answerMaxBytes).toBe(1_048_576);
  });

  it.each([
    ['MAX_ITERATIONS', 'ten'],
    ['TOOL_TIMEOUT_MS', '999'],
    ['APPROVAL_TIMEOUT_MS', '1.5e6'],
    ['ON_DISCONNECT', 'abort'],
    ['ENABLE_RUN_COMMAND', 'yes'],
    ['TOOL_POLICY', 'write_file=maybe'],
    ['DATABASE_URL', 'mysql://x'],
    ['OPENAI_BASE_URL', 'not a url'],
    ['PORT', '70000'],
    ['ANSWER_MAX_BYTES', '0'],
    ['RUN_LEASE_MS', '999'],
    ['RUN_MAX_RESUMES', '-1'],
    ['RUN_MAX_RESUMES', 'three'],
    ['COMPACT_AT', '0'],
    ['COMPACT_AT', '1.5'],
    ['COMPACT_AT', '80%'],
    ['LLM_CONTEXT_TOKENS', '16k'],
  ])('stops on %s=%s with a message naming the variable and what it accepts', (variable, value) => {
    expect(() => loadConfig({ [variable]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [variable]: value })).toThrow(new RegExp(`^${variable}=.*accepts`));
  });

  it('refuses a non-loopback HOST while API_KEYS is unset, and allows it with keys', () => {
    expect(() => loadConfig({ HOST: '0.0.0.0' })).toThrow(/HOST=.*loopback/);
    expect(loadConfig({ HOST: '0.0.0.0', API_KEYS: 'ops:s3cret' }).host).toBe('0.0.0.0');
    expect(loadConfig({ HOST: '::1' }).host).toBe('::1');
  });

  it('reads API_KEYS as name:secret pairs, secrets that contain colons included, and never echoes them', () => {
    const keys = loadConfig({ API_KEYS: 'alice:a:b:c, team bob:xyz' }).apiKeys!;
    expect([...keys]).toEqual([
      ['a:b:c', 'alice'],
      ['xyz', 'team bob'],
    ]);
    expect(() => loadConfig({ API_KEYS: 'alice:same,bob:same' })).toThrow(/API_KEYS/);
    expect(() => loadConfig({ API_KEYS: 'nosecret' })).toThrow(/API_KEYS/);
    expect(() => loadConfig({ API_KEYS: 'alice:topsecret,bob:topsecret' })).toThrow(/API_KEYS/);
    expect(() => loadConfig({ API_KEYS: 'alice:topsecret,bob:topsecret' })).not.toThrow(/topsecret/);
  });

  it('reads the model providers’ variables, with the contract defaults', () => {
    expect(loadConfig({}, '/srv').llm).toMatchObject({
      endpoints: { OPENAI: { apiKey: null, baseUrl: null }, ANTHROPIC: { apiKey: null, baseUrl: null } },
      headers: {},
      fallbackModels: [],
      models: [],
      reasoning: 'off',
      maxOutputTokens: 16_384,
    });
    const c = loadConfig(
      {
        ANTHROPIC_API_KEY: 'sk-ant',
        LLM_HEADERS: '{"Copilot-Integration-Id":"vscode-chat","Editor-Version":"vscode/1.99"}',
        LLM_FALLBACK_MODELS: 'anthropic/claude-x, openai/meta/llama-3',
        LLM_MODELS: 'anthropic/*,gpt-4o',
        LLM_REASONING: 'high',
      },
      '/srv',
    );
    expect(c.llm.endpoints.ANTHROPIC.apiKey).toBe('sk-ant');
    expect(c.llm.headers).toEqual({
      'Copilot-Integration-Id': 'vscode-chat',
      'Editor-Version': 'vscode/1.99',
    });
    expect(c.llm.fallbackModels).toEqual(['anthropic/claude-x', 'openai/meta/llama-3']);
    expect(c.llm.models).toEqual(['anthropic/*', 'gpt-4o']);
    expect(c.llm.reasoning).toBe('high');
  });

  it.each([
    ['LLM_HEADERS', '{"X-Secret":'],
    ['LLM_HEADERS', '["a"]'],
    ['LLM_HEADERS', '{"X-Count":3}'],
    ['LLM_HEADERS', '{"Bad Header":"x"}'],
    ['LLM_REASONING', 'max'],
    ['LLM_FALLBACK_MODELS', 'anthropic//x'],
    ['LLM_MAX_OUTPUT_TOKENS', '0'],
  ])('stops start-up on %s=%s, naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value }, '/srv')).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value }, '/srv')).toThrow(new RegExp(`^${name}=`));
  });

  it('never echoes LLM_HEADERS, which may hold a token', () => {
    expect(() => loadConfig({ LLM_HEADERS: '{"Authorization":1234}' }, '/srv')).toThrow(/<redacted>/);
  });

  it('reads TOOL_POLICY overrides per tool', () => {
    expect(loadConfig({ TOOL_POLICY: 'write_file=allow, run_command=confirm' }).toolPolicy).toEqual({
      write_file: 'allow',
      run_command: 'confirm',
    });
  });
});
