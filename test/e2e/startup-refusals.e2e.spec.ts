import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const MAIN = join(__dirname, '../../dist/main.js');
const PASSWORD = 'pw-of-a-refused-value-5521';

/** What `node dist/main.js` prints and its exit code when it refuses to start. */
async function refusedStart(env: Record<string, string>): Promise<{ code: number | null; lines: string[] }> {
  const child = spawn(process.execPath, [MAIN], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      WORKSPACE_ROOT: mkdtempSync(join(tmpdir(), 'loopwright-refused-')),
      DATA_DIR: mkdtempSync(join(tmpdir(), 'loopwright-refused-data-')),
      PORT: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((done) => child.once('exit', done));
  return { code, lines: out.trim().split('\n') };
}

describe('start-up refusals: one line naming the variable, never its secret (e2e)', () => {
  it.each([
    ['LLM_MODEL', 'anthropic/claude-sonnet-4-6'],
    ['LLM_FALLBACK_MODELS', 'anthropic/claude-haiku-4-5'],
    ['LLM_MODELS', 'anthropic/*'],
  ])(
    'refuses %s naming anthropic without ANTHROPIC_API_KEY in one line that names the key',
    async (variable, value) => {
      const { code, lines } = await refusedStart({ [variable]: value });
      expect(code).toBe(1);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`Loopwright cannot start: ${variable}=`);
      expect(lines[0]).toContain('anthropic is not configured: set ANTHROPIC_API_KEY');
      expect(lines[0]).not.toMatch(/router|\bat /);
    },
  );

  it.each([
    ['DATABASE_URL', `mysql://app:${PASSWORD}@db.internal/loopwright`],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', `ftp://user:${PASSWORD}@collector.example.com`],
  ])('refuses a bad %s without its password', async (variable, value) => {
    const { code, lines } = await refusedStart({ [variable]: value });
    expect(code).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`${variable}=`);
    expect(lines[0]).not.toContain(PASSWORD);
  });
});
