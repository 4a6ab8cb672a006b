import { execFile, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';

const root = join(__dirname, '..', '..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');
const run = promisify(execFile);

interface Stage {
  from: string;
  lines: string[];
}

/** The Dockerfile's instructions (continuation lines joined, comments dropped), by stage. */
function stages(dockerfile: string): Stage[] {
  const instructions = dockerfile
    .replace(/\\\r?\n/g, ' ')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const result: Stage[] = [];
  for (const line of instructions) {
    if (/^FROM\s/i.test(line)) result.push({ from: line, lines: [] });
    else result.at(-1)?.lines.push(line);
  }
  return result;
}

/** Whether a Docker engine answers here: without one, the compose check is skipped, saying so. */
const HAVE_ENGINE = spawnSync('docker', ['info'], { timeout: 10_000 }).status === 0;
if (!HAVE_ENGINE)
  console.warn('skipped: `docker compose config` needs a Docker engine, and none answers here');

describe('the container image', () => {
  const all = stages(read('Dockerfile'));
  const final = all.at(-1)!;

  it('builds in one stage and runs from another', () => {
    expect(all.length).toBeGreaterThanOrEqual(2);
    for (const stage of all) expect(stage.from).toMatch(/^FROM node:24-(bookworm-slim|alpine)\b/);
    expect(all[0].lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^RUN npm (ci|install)\b(?!.*--omit=dev)/),
        'RUN npm run build',
      ]),
    );
  });

  it('installs production dependencies only in the final stage and copies the compiled app', () => {
    const installs = final.lines.filter((line) => /\bnpm (ci|install|i)\b/.test(line));
    expect(installs.length).toBeGreaterThan(0);
    for (const line of installs) expect(line).toContain('--omit=dev');
    expect(final.lines.join('\n')).not.toMatch(/npm run build|COPY (--chown=\S+ )?(\.|src) /);
    expect(final.lines).toEqual(
      expect.arrayContaining([expect.stringMatching(/^COPY --from=\S+ \/app\/dist \.\/dist$/)]),
    );
  });

  it('runs as the non-root node user', () => {
    const users = final.lines.filter((line) => /^USER\s/.test(line));
    expect(users.at(-1)).toBe('USER node');
  });

  it('checks readiness with node itself (no curl in the image)', () => {
    const check = final.lines.find((line) => line.startsWith('HEALTHCHECK'));
    expect(check).toMatch(/CMD \["node", "-e", ".*fetch\(.*\/health\/ready/);
    expect(check).not.toMatch(/curl|wget/);
  });

  it('listens on every interface, keeps the workspace at /workspace, and starts node dist/main.js in exec form', () => {
    const env = final.lines.filter((line) => line.startsWith('ENV')).join(' ');
    expect(env).toMatch(/\bHOST=0\.0\.0\.0\b/);
    expect(env).toMatch(/\bWORKSPACE_ROOT=\/workspace\b/);
    const cmd = final.lines.filter((line) => line.startsWith('CMD'));
    expect(cmd.at(-1)).toBe('CMD ["node", "dist/main.js"]');
  });

  it('keeps secrets and local state out of the build context', () => {
    const ignored = read('.dockerignore')
      .split(/\r?\n/)
      .map((line) => line.trim());
    expect(ignored).toEqual(
      expect.arrayContaining(['.env', 'node_modules', 'dist', '.data', 'workspace', '.git']),
    );
  });
});

describe('docker-compose.yml', () => {
  const compose = parse(read('docker-compose.yml')) as {
    services: Record<string, Record<string, unknown>>;
    volumes?: Record<string, unknown>;
  };
  const db = compose.services.postgres;
  const app = compose.services.loopwright;

  it('runs PostgreSQL 17 on a named volume with a pg_isready healthcheck', () => {
    expect(db.image).toMatch(/^postgres:17\b/);
    const [volume] = (db.volumes as string[])[0].split(':');
    expect(Object.keys(compose.volumes ?? {})).toContain(volume);
    expect(JSON.stringify((db.healthcheck as { test: unknown }).test)).toContain('pg_isready');
  });

  it('starts the server once the database is healthy, pointed at it', () => {
    expect(app.build).toBeDefined();
    expect(app.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    const env = app.environment as Record<string, string>;
    expect(env.DATABASE_URL).toMatch(/^postgres(ql)?:\/\/[^@]+@postgres:5432\//);
    expect(env.HOST).toBe('0.0.0.0');
  });

  it('reads secrets from .env, mounts the workspace and publishes port 3000', () => {
    expect(app.env_file).toEqual('.env');
    expect(app.volumes).toContain('./workspace:/workspace');
    expect((app.ports as string[]).some((port) => /(^|:)3000:3000$/.test(port))).toBe(true);
    expect((app.environment as Record<string, string>).WORKSPACE_ROOT).toBe('/workspace');
  });

  (HAVE_ENGINE ? it : it.skip)('is accepted by docker compose (needs a Docker engine)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loopwright-compose-'));
    copyFileSync(join(root, 'docker-compose.yml'), join(dir, 'docker-compose.yml'));
    writeFileSync(join(dir, '.env'), 'API_KEYS=ci:secret\nOPENAI_API_KEY=sk-test\n');
    const { stdout } = await run('docker', [
      'compose',
      '--project-directory',
      dir,
      '-f',
      join(dir, 'docker-compose.yml'),
      'config',
      '--quiet',
    ]);
    expect(stdout).toBe('');
  });
});

describe('.env.example', () => {
  it('documents every variable the config loader reads, each with a comment', () => {
    const read = [
      ...readFileSync(join(root, 'src/config/app-config.ts'), 'utf8').matchAll(/read\.\w+\('([A-Z0-9_]+)'/g),
    ].map((m) => m[1]);
    const lines = readFileSync(join(root, '.env.example'), 'utf8').split(/\r?\n/);
    const documented = new Map<string, number>();
    lines.forEach((line, i) => {
      const match = /^#? ?([A-Z0-9_]+)=/.exec(line);
      if (match) documented.set(match[1], i);
    });
    expect(new Set(read).size).toBeGreaterThanOrEqual(30);
    for (const name of new Set(read)) {
      const at = documented.get(name);
      expect({ name, documented: at !== undefined }).toEqual({ name, documented: true });
      const comment = /^# (?![A-Z0-9_]+=)\S/.test(lines[at! - 1] ?? '');
      expect({ name, comment }).toEqual({ name, comment: true });
    }
  });
});
