import { existsSync } from 'node:fs';
import { makeCommandGroup, MAX_PROCESSES, type ControlGroups, type LimitHit } from './control-groups';

export { MAX_PROCESSES, type LimitHit };

/** Limits of one command together with everything it starts. */
export interface LimitSpec {
  memoryMb: number;
  /** CPU seconds: the command's timeout bounds it anyway. */
  cpuSeconds: number;
}

/** Files at most this large. */
export const MAX_FILE_BYTES = 1024 * 1024 * 1024;

/** util-linux's prlimit, where Debian puts it (found on PATH otherwise). */
const PRLIMIT = existsSync('/usr/bin/prlimit') ? '/usr/bin/prlimit' : 'prlimit';

export interface AppliedLimits {
  /** The command line that applies the limits and then runs `argv`. */
  argv: string[];
  /** After the command ended: which limit stopped it, and the removal of its control group. */
  finish(): LimitHit;
}

/**
 * Memory and process count are limits of the whole process tree: a control group of its own
 * (`groups`, found at start-up: cgroup v2, or cgroup v1's `memory` and `pids` controllers) that the
 * command's first process enters before it runs anything. File size and CPU time are per-process
 * rlimits set by `prlimit`. Without a usable control group, memory falls back to a per-process data
 * limit and the process count to RLIMIT_NPROC (which the kernel does not apply to root).
 */
export function applyLimits(argv: string[], spec: LimitSpec, groups: ControlGroups): AppliedLimits {
  const memoryBytes = spec.memoryMb * 1024 * 1024;
  const group = commandGroup(groups, memoryBytes);
  const prlimit = [
    PRLIMIT,
    `--fsize=${MAX_FILE_BYTES}`,
    `--cpu=${spec.cpuSeconds}`,
    ...(group ? [] : [`--data=${memoryBytes}`, `--nproc=${MAX_PROCESSES}`]),
    '--',
  ];
  if (!group) return { argv: [...prlimit, ...argv], finish: () => null };
  // The first process joins the group(s), then becomes the command: nothing runs outside them.
  const joins = group.procs.map((_, i) => `echo $$ > "$${i + 1}"`).join(' && ');
  const enter = [
    '/bin/sh',
    '-c',
    `${joins} && shift ${group.procs.length} && exec "$@"`,
    'enter-limits',
    ...group.procs,
  ];
  return {
    argv: [...enter, ...prlimit, ...argv],
    finish: () => {
      const hit = group.limitHit();
      group.remove();
      return hit;
    },
  };
}

/** The command's group; null when none can be made (the per-process limits then hold). */
function commandGroup(groups: ControlGroups, memoryBytes: number) {
  if (groups.kind === 'none') return null;
  try {
    return makeCommandGroup(groups, memoryBytes);
  } catch {
    // A group that worked at start-up and fails now (e.g. too many groups): this command gets the
    // per-process limits, as a host without control groups does.
    return null;
  }
}
