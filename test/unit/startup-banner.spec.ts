import { loadConfig, ConfigError } from '../../src/config/app-config';
import {
  bannerRecord,
  bannerText,
  databaseLocation,
  type BannerFacts,
} from '../../src/observability/startup-banner';
import { QuietNestBoot } from '../../src/observability/quiet-nest-boot';

const facts: BannerFacts = {
  url: 'http://127.0.0.1:3000',
  model: { name: 'gpt-4.1-mini', provider: 'openai', baseUrl: 'https://api.openai.com/v1' },
  providers: [{ name: 'openai', baseUrl: 'https://api.openai.com/v1' }],
  fallbacks: [],
  budgets: [],
  adminKeys: [],
  traces: null,
  database: { kind: 'embedded', dataDir: '/srv/loopwright/.data' },
  workspace: { root: '/srv/loopwright/workspace', scope: 'key' },
  keys: ['alice', 'bob'],
  tools: [
    { name: 'read_file', policy: 'allow' },
    { name: 'write_file', policy: 'confirm' },
  ],
  mcp: [{ name: 'github', status: 'connecting' }],
  off: ['run_command (shell commands) is off: ENABLE_RUN_COMMAND=true turns it on.'],
};

describe('the start-up banner', () => {
  it('says where the playground, the API and its docs are, and what runs and what is off', () => {
    const text = bannerText(facts);
    expect(text).toContain('Playground   http://127.0.0.1:3000/');
    expect(text).toContain('API docs     http://127.0.0.1:3000/docs');
    expect(text).toContain('embedded PostgreSQL, data in /srv/loopwright/.data');
    expect(text).toContain('WORKSPACE_SCOPE=key: a folder per key');
    expect(text).toMatch(/Tools run +read_file/);
    expect(text).toMatch(/Tools ask +write_file/);
    expect(text).toContain('github (connecting)');
    expect(text).toContain('  - run_command (shell commands) is off');
    expect(bannerRecord(facts)).toMatchObject({
      urls: {
        api: 'http://127.0.0.1:3000/v1',
        playground: 'http://127.0.0.1:3000/',
        docs: 'http://127.0.0.1:3000/docs',
      },
      auth: { keys: ['alice', 'bob'] },
    });
  });

  it('shows an external database without its password', () => {
    expect(databaseLocation('postgres://app:s3cret@db.internal:5433/loopwright')).toBe(
      'db.internal:5433/loopwright as app',
    );
    expect(databaseLocation('not a url')).toBe('DATABASE_URL');
  });

  it('takes LOG_FORMAT pretty, json or auto, and names the variable for anything else', () => {
    expect(loadConfig({}).logFormat).toBe('auto');
    expect(loadConfig({ LOG_FORMAT: 'json' }).logFormat).toBe('json');
    expect(() => loadConfig({ LOG_FORMAT: 'fancy' })).toThrow(ConfigError);
    expect(() => loadConfig({ LOG_FORMAT: 'fancy' })).toThrow(/LOG_FORMAT.*auto, pretty, json/);
  });

  it("puts Nest's start-up lines at debug and passes every other line through", () => {
    const lines: string[] = [];
    const inner = {
      log: (m: unknown) => void lines.push(`log ${String(m)}`),
      debug: (m: unknown) => void lines.push(`debug ${String(m)}`),
      error: (m: unknown) => void lines.push(`error ${String(m)}`),
      warn: (m: unknown) => void lines.push(`warn ${String(m)}`),
    };
    const logger = new QuietNestBoot(inner);
    logger.log('Mapped {/v1/chat, POST} route', 'RouterExplorer');
    logger.log('AppModule dependencies initialized', 'InstanceLoader');
    logger.log('driving run', 'Runs');
    logger.warn('careful', 'Mcp');
    expect(lines).toEqual([
      'debug Mapped {/v1/chat, POST} route',
      'debug AppModule dependencies initialized',
      'log driving run',
      'warn careful',
    ]);
  });
});
