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

/**
 * The Compose programs here: the plugin (`docker compose`) and Debian's `docker-compose`. Checking a
 * file (`config`) needs no engine. Without either the check is skipped, saying so.
 */
const COMPOSE_PROGRAMS = [
  { name: 'docker compose', command: 'docker', args: ['compose'] },
  { name: 'docker-compose', command: 'docker-compose', args: [] },
].filter((p) => spawnSync(p.command, [...p.args, 'version'], { timeout: 10_000 }).status === 0);
if (COMPOSE_PROGRAMS.length === 0)
  console.warn(
    'skipped: neither `docker compose` nor `docker-compose` is installed to check docker-compose.yml',
  );

/** `config --quiet` of the compose file with `env` as its .env: exit code and what it printed. */
async function composeConfig(
  program: (typeof COMPOSE_PROGRAMS)[number],
  env: string,
  files: readonly string[] = ['docker-compose.yml'],
): Promise<{ code: number; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'loopwright-compose-'));
  for (const file of files) copyFileSync(join(root, file), join(dir, file));
  writeFileSync(join(dir, '.env'), env);
  const args = [
    ...program.args,
    '--project-directory',
    dir,
    ...files.flatMap((file) => ['-f', join(dir, file)]),
    'config',
    '--quiet',
  ];
  try {
    const { stdout, stderr } = await run(program.command, args, { cwd: dir });
    return { code: 0, output: stdout + stderr };
  } catch (err) {
    const failed = err as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? 1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

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

  it('reads secrets from .env, requires API_KEYS and POSTGRES_PASSWORD there, and has no default password', () => {
    expect(app.env_file).toEqual('.env');
    const env = app.environment as Record<string, string>;
    expect(env.API_KEYS).toMatch(/^\$\{API_KEYS:\?.+\}$/);
    expect(env.DATABASE_URL).toContain('${POSTGRES_PASSWORD:?');
    expect((db.environment as Record<string, string>).POSTGRES_PASSWORD).toMatch(
      /^\$\{POSTGRES_PASSWORD:\?.+\}$/,
    );
    expect(read('docker-compose.yml')).not.toMatch(/POSTGRES_PASSWORD:-/);
  });

  it("keeps the workspace on a named volume (the image's user owns it), publishes port 3000, reaps orphans", () => {
    expect(app.volumes).toContain('workspace:/workspace');
    expect(Object.keys(compose.volumes ?? {})).toContain('workspace');
    expect((app.ports as string[]).some((port) => /(^|:)3000:3000$/.test(port))).toBe(true);
    expect((app.environment as Record<string, string>).WORKSPACE_ROOT).toBe('/workspace');
    expect(app.init).toBe(true);
  });

  it("has no top-level name (Debian's docker-compose refuses it)", () => {
    expect(Object.keys(compose)).not.toContain('name');
  });

  for (const program of COMPOSE_PROGRAMS) {
    it(`is accepted by ${program.name}, and refused naming API_KEYS while .env lacks it`, async () => {
      const complete = await composeConfig(
        program,
        'API_KEYS=ci:secret\nPOSTGRES_PASSWORD=pw\nOPENAI_API_KEY=sk-test\n',
      );
      expect(complete).toEqual({ code: 0, output: '' });
      const noKeys = await composeConfig(program, 'POSTGRES_PASSWORD=pw\n');
      expect(noKeys.code).not.toBe(0);
      expect(noKeys.output).toContain('set API_KEYS in .env');
    });
  }
});

describe('docker-compose.team.yml', () => {
  const team = parse(read('docker-compose.team.yml')) as {
    services: Record<string, { environment?: Record<string, string>; depends_on?: Record<string, unknown> }>;
  };

  it('adds a trace collector that the server exports to over OTLP/HTTP', () => {
    expect(Object.keys(team.services)).toEqual(['jaeger', 'loopwright']);
    expect(team.services.loopwright.environment?.OTEL_EXPORTER_OTLP_ENDPOINT).toBe('http://jaeger:4318');
    expect(Object.keys(team.services.loopwright.depends_on ?? {})).toEqual(['jaeger']);
    expect(Object.keys(team)).not.toContain('name');
  });

  for (const program of COMPOSE_PROGRAMS) {
    it(`is accepted by ${program.name} over docker-compose.yml`, async () => {
      const both = await composeConfig(
        program,
        'API_KEYS=ci:secret\nPOSTGRES_PASSWORD=pw\nOPENAI_API_KEY=sk-test\nBUDGETS=ci=1usd/day\n',
        ['docker-compose.yml', 'docker-compose.team.yml'],
      );
      expect(both).toEqual({ code: 0, output: '' });
    });
  }
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
