import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Limits of one command together with everything it starts. */
export interface LimitSpec {
  memoryMb: number;
  /** CPU seconds: the command's timeout bounds it anyway. */
  cpuSeconds: number;
}

/** At most this many processes and threads at once, and files at most this large. */
export const MAX_PROCESSES = 256;
export const MAX_FILE_BYTES = 1024 * 1024 * 1024;

/** util-linux's prlimit, where Debian puts it (found on PATH otherwise). */
const PRLIMIT = existsSync('/usr/bin/prlimit') ? '/usr/bin/prlimit' : 'prlimit';

/** Which limit stopped a command, when one did. */
export type LimitHit = 'memory' | 'processes' | null;

export interface AppliedLimits {
  /** The command line that applies the limits and then runs `argv`. */
  argv: string[];
  /** After the command ended: which limit stopped it, and the cleanup of its control group. */
  finish(): LimitHit;
}

/**
 * Memory and process count are limits of the whole process tree: a control group (cgroup v1's
 * `memory` and `pids` controllers, where this process may make child groups) that the command's
 * first process enters before it runs anything. File size and CPU time are per-process rlimits set
 * by `prlimit`. Without a usable control group, memory falls back to a per-process data limit and
 * the process count to RLIMIT_NPROC (which the kernel does not apply to root).
 */
export function applyLimits(argv: string[], spec: LimitSpec): AppliedLimits {
  const memoryBytes = spec.memoryMb * 1024 * 1024;
  const groups = makeGroups(memoryBytes);
  const prlimit = [
    PRLIMIT,
    `--fsize=${MAX_FILE_BYTES}`,
    `--cpu=${spec.cpuSeconds}`,
    ...(groups ? [] : [`--data=${memoryBytes}`, `--nproc=${MAX_PROCESSES}`]),
    '--',
  ];
  if (!groups) return { argv: [...prlimit, ...argv], finish: () => null };
  // The first process joins the groups, then becomes the command: nothing runs outside them.
  const enter = [
    '/bin/sh',
    '-c',
    'echo $$ > "$1" && echo $$ > "$2" && shift 2 && exec "$@"',
    'enter-limits',
    join(groups.memory, 'cgroup.procs'),
    join(groups.pids, 'cgroup.procs'),
  ];
  return {
    argv: [...enter, ...prlimit, ...argv],
    finish: () => {
      const hit: LimitHit =
        counter(join(groups.memory, 'memory.oom_control'), 'oom_kill') > 0 ||
        readNumber(join(groups.memory, 'memory.failcnt')) > 0
          ? 'memory'
          : counter(join(groups.pids, 'pids.events'), 'max') > 0
            ? 'processes'
            : null;
      for (const dir of [groups.memory, groups.pids]) removeGroup(dir);
      return hit;
    },
  };
}

/** Whether control groups can limit commands here (said at start-up). */
export function controlGroupsAvailable(): boolean {
  const groups = makeGroups(64 * 1024 * 1024);
  if (!groups) return false;
  removeGroup(groups.memory);
  removeGroup(groups.pids);
  return true;
}

interface Groups {
  memory: string;
  pids: string;
}

/** New child groups of this process's own memory and pids groups, with their limits; null when not possible. */
function makeGroups(memoryBytes: number): Groups | null {
  const own = ownGroups();
  if (!own.memory || !own.pids) return null;
  const name = `loopwright-${randomBytes(6).toString('hex')}`;
  const memory = join('/sys/fs/cgroup/memory', own.memory, name);
  const pids = join('/sys/fs/cgroup/pids', own.pids, name);
  try {
    mkdirSync(memory);
    mkdirSync(pids);
    writeFileSync(join(memory, 'memory.limit_in_bytes'), String(memoryBytes));
    // Swap counts too where the kernel accounts it; without swap accounting the file is absent.
    if (existsSync(join(memory, 'memory.memsw.limit_in_bytes'))) {
      writeFileSync(join(memory, 'memory.memsw.limit_in_bytes'), String(memoryBytes));
    }
    writeFileSync(join(pids, 'pids.max'), String(MAX_PROCESSES));
    return { memory, pids };
  } catch {
    removeGroup(memory);
    removeGroup(pids);
    return null;
  }
}

/** This process's cgroup v1 paths of the memory and pids hierarchies (from /proc/self/cgroup). */
function ownGroups(): { memory?: string; pids?: string } {
  const out: { memory?: string; pids?: string } = {};
  try {
    for (const line of readFileSync('/proc/self/cgroup', 'utf8').split('\n')) {
      const [, controllers, path] = line.split(':');
      if (path === undefined) continue;
      const names = controllers.split(',');
      if (names.includes('memory') && existsSync('/sys/fs/cgroup/memory')) out.memory = path;
      if (names.includes('pids') && existsSync('/sys/fs/cgroup/pids')) out.pids = path;
    }
  } catch {
    // not Linux, or no /proc
  }
  return out;
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
