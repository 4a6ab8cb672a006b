import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { applyLimits } from '../../src/tools/exec/command-limits';
import { CommandSandbox } from '../../src/tools/exec/command-sandbox.service';
import {
  detectControlGroups,
  makeCommandGroup,
  SERVER_LEAF,
  type CgroupHost,
} from '../../src/tools/exec/control-groups';
import { testConfig } from './support/tool-fixtures';

/** Limits are described only where a sandbox can be made (sandbox.spec.ts says when it cannot). */
const HAVE_BWRAP = spawnSync('bwrap', ['--version']).status === 0;

/**
 * Where commands' control groups are made, read from fake /sys/fs/cgroup trees in a temp folder
 * (plain files stand in for the kernel's); the real ones are tried in sandbox.spec.ts.
 */
describe('the control groups of commands', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'fake-cgroup-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  /** Writes `files` (paths relative to the fake root), making their folders. */
  const tree = (files: Record<string, string>) => {
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), content);
    }
  };
  const read = (path: string) => readFileSync(join(root, path), 'utf8');
  const host = (selfCgroup: string): CgroupHost => ({ root, selfCgroup });

  /** A cgroup v2 host (Debian 12, Ubuntu 22.04+, Docker and Kubernetes nodes) whose group `/svc` is delegated. */
  const v2Host = (controllers = 'cpu memory pids') =>
    tree({
      'cgroup.controllers': 'cpuset cpu io memory pids',
      'svc/cgroup.controllers': controllers,
      'svc/cgroup.subtree_control': '',
      'svc/cgroup.procs': '4242\n',
    });

  it('on cgroup v2 moves the server into its leaf, gives memory and pids to children, and makes each command a group', () => {
    v2Host();
    const groups = detectControlGroups(host('0::/svc\n'));
    expect(groups).toEqual({ kind: 'v2', parent: join(root, 'svc') });
    expect(read(`svc/${SERVER_LEAF}/cgroup.procs`)).toBe('4242');
    expect(read('svc/cgroup.subtree_control')).toBe('+memory +pids');

    const group = makeCommandGroup(groups, 64 * 1024 * 1024);
    const dir = dirname(group.procs[0]);
    expect(dirname(dir)).toBe(join(root, 'svc'));
    expect(readFileSync(join(dir, 'memory.max'), 'utf8')).toBe(String(64 * 1024 * 1024));
    expect(readFileSync(join(dir, 'pids.max'), 'utf8')).toBe('256');
    expect(group.limitHit()).toBeNull();
    writeFileSync(join(dir, 'memory.events'), 'low 0\nhigh 0\nmax 9\noom 1\noom_kill 1\n');
    expect(group.limitHit()).toBe('memory');
  });

  it('on cgroup v2 puts the command in its group before it runs anything', () => {
    v2Host();
    const limits = applyLimits(
      ['/bin/true'],
      { memoryMb: 64, cpuSeconds: 5 },
      detectControlGroups(host('0::/svc\n')),
    );
    const procs = limits.argv.find((a) => a.startsWith(join(root, 'svc', 'loopwright-')))!;
    expect(procs).toMatch(/\/cgroup\.procs$/);
    const ran = spawnSync(limits.argv[0], limits.argv.slice(1), { encoding: 'utf8' });
    expect(ran.status).toBe(0);
    expect(Number(readFileSync(procs, 'utf8'))).toBeGreaterThan(0);
    expect(limits.argv).not.toContain('--data=67108864'); // no per-process fallback
  });

  it('finds the group again after the server moved into its leaf, without nesting another', () => {
    v2Host();
    tree({ 'svc/cgroup.subtree_control': 'memory pids' });
    expect(detectControlGroups(host(`0::/svc/${SERVER_LEAF}\n`))).toEqual({
      kind: 'v2',
      parent: join(root, 'svc'),
    });
  });

  it('says which controller cgroup v2 lacks when it cannot hold a command tree', () => {
    v2Host('cpu memory');
    const groups = detectControlGroups(host('0::/svc\n'));
    expect(groups.kind).toBe('none');
    expect(groups.kind === 'none' && groups.why).toContain(
      `cgroup v2 at ${join(root, 'svc')} offers no pids controller`,
    );
  });

  it('on a hybrid host takes cgroup v1 when v2 has no controllers, and says why neither works without v1', () => {
    const self = '8:pids:/\n4:memory:/job\n0::/\n';
    tree({ 'unified/cgroup.controllers': '' });
    const none = detectControlGroups(host(self));
    expect(none.kind).toBe('none');
    expect(none.kind === 'none' && none.why).toMatch(
      new RegExp(
        `cgroup v2 at ${join(root, 'unified')} offers no memory or pids controller.*; cgroup v1: ENOENT`,
      ),
    );
    mkdirSync(join(root, 'memory/job'), { recursive: true });
    mkdirSync(join(root, 'pids'), { recursive: true });
    expect(detectControlGroups(host(self))).toEqual({
      kind: 'v1',
      memory: join(root, 'memory/job'),
      pids: join(root, 'pids'),
    });
  });

  (HAVE_BWRAP ? it : it.skip)('says at start-up exactly which limits hold', () => {
    class FakeHost extends CommandSandbox {
      protected override readonly cgroupHost = host('0::/svc\n');
    }
    const config = testConfig(root, { enableRunCommand: true, runCommandMemoryMb: 512 });
    v2Host();
    const delegated = new FakeHost(config);
    delegated.onModuleInit();
    expect(delegated.limitsHeld).toBe(
      `commands: memory (512 MiB) and process (256) limits per command tree via cgroup v2 at ${join(root, 'svc')}`,
    );
    tree({ 'svc/cgroup.controllers': 'cpu', 'svc/cgroup.subtree_control': '' });
    const lacking = new FakeHost(config);
    lacking.onModuleInit();
    expect(lacking.limitsHeld).toMatch(
      /^commands: memory \(512 MiB\) and process \(256\) limits per-process only \(a command's children each get their own\), because cgroup v2 at .* offers no memory or pids controller/,
    );
  });
});
