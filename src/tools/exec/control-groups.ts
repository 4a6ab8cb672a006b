import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** At most this many processes and threads at once in one command's group. */
export const MAX_PROCESSES = 256;

/** Which limit stopped a command, when one did. */
export type LimitHit = 'memory' | 'processes' | null;

/**
 * Where the control groups of commands are made, decided once at start-up: child groups of this
 * process's own cgroup v1 `memory` and `pids` groups, or of its cgroup v2 group; or none, and why.
 */
export type ControlGroups =
  | { kind: 'v1'; memory: string; pids: string }
  | { kind: 'v2'; parent: string }
  | { kind: 'none'; why: string };

/** One command's group: the `cgroup.procs` files its first process enters, what stopped it, its removal. */
export interface CommandGroup {
  procs: string[];
  limitHit(): LimitHit;
  remove(): void;
}

/** The files detection reads: the host's, or a fake tree in a test. */
export interface CgroupHost {
  /** Where the cgroup file systems are mounted: /sys/fs/cgroup. */
  root: string;
  /** The text of /proc/self/cgroup. */
  selfCgroup: string;
}

/** The leaf the processes of this server's own cgroup v2 group move to, so that group may delegate. */
export const SERVER_LEAF = 'loopwright-server';

export function hostCgroups(): CgroupHost {
  let selfCgroup = '';
  try {
    selfCgroup = readFileSync('/proc/self/cgroup', 'utf8');
  } catch {
    // not Linux, or no /proc: no control group
  }
  return { root: '/sys/fs/cgroup', selfCgroup };
}

/**
 * Finds where commands' groups can be made, trying each by making one: cgroup v2 first (where
 * this process's group has the memory and pids controllers), then cgroup v1. On cgroup v2 a group
 * with processes cannot give controllers to children, so this server's group first moves its
 * processes into a leaf, `loopwright-server` (as systemd asks of a delegated service), then enables
 * `memory` and `pids` for its children.
 */
export function detectControlGroups(host: CgroupHost = hostCgroups()): ControlGroups {
  const lines = host.selfCgroup
    .split('\n')
    .map((line) => line.split(':'))
    .filter((parts) => parts.length >= 3)
    .map(([, controllers, ...path]) => ({ controllers: controllers.split(','), path: path.join(':') }));
  const reasons: string[] = [];

  const unifiedPath = lines.find((l) => l.controllers.length === 1 && l.controllers[0] === '')?.path;
  const mount = [host.root, join(host.root, 'unified')].find((dir) =>
    existsSync(join(dir, 'cgroup.controllers')),
  );
  if (unifiedPath !== undefined && mount !== undefined) {
    // Already moved to its leaf (an earlier detection in this process): its parent is the group.
    const own = groupPath(mount, unifiedPath);
    const v2 = delegateV2(basename(own) === SERVER_LEAF ? dirname(own) : own);
    if (typeof v2 !== 'string') return v2;
    reasons.push(v2);
  } else {
    reasons.push('no cgroup v2 group of this process');
  }

  const memoryPath = lines.find((l) => l.controllers.includes('memory'))?.path;
  const pidsPath = lines.find((l) => l.controllers.includes('pids'))?.path;
  if (memoryPath !== undefined && pidsPath !== undefined) {
    const groups = {
      kind: 'v1' as const,
      memory: groupPath(host.root, 'memory', memoryPath),
      pids: groupPath(host.root, 'pids', pidsPath),
    };
    const failed = tryOne(groups);
    if (failed === null) return groups;
    reasons.push(`cgroup v1: ${failed}`);
  } else {
    reasons.push('no cgroup v1 memory and pids hierarchies');
  }
  return { kind: 'none', why: reasons.join('; ') };
}

/** Makes `own` (this process's cgroup v2 group) a parent of command groups; a reason when it cannot be. */
function delegateV2(own: string): ControlGroups | string {
  const available = words(join(own, 'cgroup.controllers'));
  const lacking = ['memory', 'pids'].filter((c) => !available.includes(c));
  if (lacking.length > 0) {
    return `cgroup v2 at ${own} offers no ${lacking.join(' or ')} controller (on a hybrid host they are cgroup v1's; in a container, start it with its own cgroup namespace)`;
  }
  try {
    const enabled = words(join(own, 'cgroup.subtree_control'));
    if (!enabled.includes('memory') || !enabled.includes('pids')) {
      const leaf = join(own, SERVER_LEAF);
      mkdirSync(leaf, { recursive: true });
      for (const pid of words(join(own, 'cgroup.procs'))) writeFileSync(join(leaf, 'cgroup.procs'), pid);
      writeFileSync(join(own, 'cgroup.subtree_control'), '+memory +pids');
    }
  } catch (err) {
    return `cgroup v2 at ${own} cannot be delegated to commands (${messageOf(err)}; it needs to be writable by this user, e.g. systemd's Delegate=yes)`;
  }
  const groups = { kind: 'v2' as const, parent: own };
  const failed = tryOne(groups);
  return failed === null ? groups : `cgroup v2 at ${own}: ${failed}`;
}

/** Makes and removes one command group: null when that works, else why not. */
function tryOne(groups: ControlGroups): string | null {
  try {
    makeCommandGroup(groups, 64 * 1024 * 1024).remove();
    return null;
  } catch (err) {
    return messageOf(err);
  }
}

/** A new group for one command, holding it and everything it starts to `memoryBytes` and MAX_PROCESSES. */
export function makeCommandGroup(groups: ControlGroups, memoryBytes: number): CommandGroup {
  if (groups.kind === 'none') throw new Error(groups.why);
  const name = `loopwright-${randomBytes(6).toString('hex')}`;
  if (groups.kind === 'v2') {
    const dir = join(groups.parent, name);
    return made([dir], () => {
      writeFileSync(join(dir, 'memory.max'), String(memoryBytes));
      // Swap would let a command past its memory: none, where the kernel accounts it.
      if (existsSync(join(dir, 'memory.swap.max'))) writeFileSync(join(dir, 'memory.swap.max'), '0');
      writeFileSync(join(dir, 'pids.max'), String(MAX_PROCESSES));
      return {
        procs: [join(dir, 'cgroup.procs')],
        limitHit: () =>
          counter(join(dir, 'memory.events'), 'oom_kill') > 0 ||
          counter(join(dir, 'memory.events'), 'oom') > 0
            ? 'memory'
            : counter(join(dir, 'pids.events'), 'max') > 0
              ? 'processes'
              : null,
        remove: () => {
          // Whatever is left of the command ends with its group (cgroup.kill: Linux 5.14 and later).
          if (existsSync(join(dir, 'cgroup.kill')))
            ignoreFailure(() => writeFileSync(join(dir, 'cgroup.kill'), '1'));
          removeGroup(dir);
        },
      };
    });
  }
  const memory = join(groups.memory, name);
  const pids = join(groups.pids, name);
  return made([memory, pids], () => {
    writeFileSync(join(memory, 'memory.limit_in_bytes'), String(memoryBytes));
    // Swap counts too where the kernel accounts it; without swap accounting the file is absent.
    if (existsSync(join(memory, 'memory.memsw.limit_in_bytes'))) {
      writeFileSync(join(memory, 'memory.memsw.limit_in_bytes'), String(memoryBytes));
    }
    writeFileSync(join(pids, 'pids.max'), String(MAX_PROCESSES));
    return {
      procs: [join(memory, 'cgroup.procs'), join(pids, 'cgroup.procs')],
      limitHit: () =>
        counter(join(memory, 'memory.oom_control'), 'oom_kill') > 0 ||
        readNumber(join(memory, 'memory.failcnt')) > 0
          ? 'memory'
          : counter(join(pids, 'pids.events'), 'max') > 0
            ? 'processes'
            : null,
      remove: () => {
        removeGroup(memory);
        removeGroup(pids);
      },
    };
  });
}

/** Makes `dirs`, then sets them up; on any failure removes what was made and throws. */
function made(dirs: string[], setUp: () => CommandGroup): CommandGroup {
  const done: string[] = [];
  try {
    for (const dir of dirs) {
      mkdirSync(dir);
      done.push(dir);
    }
    return setUp();
  } catch (err) {
    for (const dir of done) removeGroup(dir);
    throw err;
  }
}

/** Removes a group once its last process has left (they may still be exiting when the command ends). */
function removeGroup(dir: string, tries = 10): void {
  try {
    rmdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EBUSY' && tries > 1) {
      setTimeout(() => removeGroup(dir, tries - 1), 500).unref();
    }
  }
}

/** Runs a best-effort step: a group that cannot be killed is still removed once its processes end. */
function ignoreFailure(step: () => void): void {
  try {
    step();
  } catch {
    // the process-group kill of the command ends it all the same; the removal retries while busy
  }
}

function words(file: string): string[] {
  try {
    return readFileSync(file, 'utf8').split(/\s+/).filter(Boolean);
  } catch {
    return [];
  }
}

function readNumber(file: string): number {
  try {
    return Number(readFileSync(file, 'utf8').trim()) || 0;
  } catch {
    return 0;
  }
}

/** `name N` from a flat-keyed cgroup file. */
function counter(file: string, name: string): number {
  try {
    const line = readFileSync(file, 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`${name} `));
    return line ? Number(line.slice(name.length + 1)) || 0 : 0;
  } catch {
    return 0;
  }
}

function messageOf(err: unknown): string {
  // Node's fs errors, whatever realm made them (instanceof Error fails across vm contexts).
  return typeof err === 'object' && err !== null && 'message' in err ? String(err.message) : String(err);
}

/** `parts` joined as a path, without the trailing slash a group path of `/` leaves. */
function groupPath(...parts: string[]): string {
  return join(...parts).replace(/(.)\/+$/, '$1');
}
