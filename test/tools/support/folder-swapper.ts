import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { arch } from 'node:os';
import { join } from 'node:path';

/**
 * A real concurrent process that swaps two names of a folder with renameat2(RENAME_EXCHANGE), as
 * fast as it can, until killed or `seconds` have passed (it stops by itself). Built at test time:
 * a small C program when a compiler is there, else python3 calling the syscall through ctypes.
 * null (with the reason) when neither is available.
 */
export interface Swapper {
  child: ChildProcess;
  stop(): Promise<void>;
}

const C_SOURCE = `
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
int main(int argc, char **argv) {
  time_t end = time(NULL) + atoi(argv[3]);
  puts("swapping");
  fflush(stdout);
  for (unsigned long i = 0;; i++) {
    if (syscall(SYS_renameat2, AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE) != 0) {
      perror("renameat2");
      return 1;
    }
    if ((i & 1023) == 0 && time(NULL) > end) return 0;
  }
}
`;

/** renameat2's number where python3 has to call it by number. */
const RENAMEAT2: Record<string, number> = { x64: 316, arm64: 276 };

const PY_SOURCE = `
import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
a, b, end = sys.argv[1].encode(), sys.argv[2].encode(), time.time() + int(sys.argv[3])
nr = int(sys.argv[4])
print("swapping", flush=True)
i = 0
while True:
    if libc.syscall(nr, -100, a, -100, b, 2) != 0:
        sys.exit("renameat2 failed: errno %d" % ctypes.get_errno())
    i += 1
    if i % 1024 == 0 and time.time() > end:
        break
`;

function has(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** The command line of a swapper built in `dir`, or the reason none can be built. */
export function buildSwapper(dir: string): { argv: string[] } | { reason: string } {
  if (process.platform !== 'linux') return { reason: 'renameat2 is Linux-only' };
  if (has('cc')) {
    const source = join(dir, 'swap.c');
    const binary = join(dir, 'swap');
    writeFileSync(source, C_SOURCE);
    try {
      execFileSync('cc', ['-O2', '-o', binary, source], { stdio: 'pipe' });
      return { argv: [binary] };
    } catch {
      // fall through to python3
    }
  }
  const nr = RENAMEAT2[arch()];
  if (has('python3') && nr !== undefined) {
    const script = join(dir, 'swap.py');
    writeFileSync(script, PY_SOURCE);
    return { argv: ['python3', script, '__NR__', String(nr)] };
  }
  return { reason: 'neither cc nor python3 (on x86_64 or arm64) is available to swap folders' };
}

/** Starts swapping `a` and `b`; resolves once the process runs. */
export function startSwapper(argv: string[], a: string, b: string, seconds: number): Promise<Swapper> {
  const [command, ...rest] = argv;
  const args =
    rest[1] === '__NR__' ? [rest[0], a, b, String(seconds), rest[2]] : [...rest, a, b, String(seconds)];
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.stdout.once('data', () => resolve({ child, stop }));
    child.once('exit', (code) => reject(new Error(`the swapper stopped before swapping (${code})`)));
  });
}
