import { spawn } from 'node:child_process';

export interface ProcessGroupOptions {
  command: string;
  /** The program and arguments that run `command` (a sandbox around it); default `/bin/sh -c command`. */
  argv?: readonly string[];
  cwd: string;
  env: Readonly<Record<string, string>>;
  signal: AbortSignal;
  /** Between SIGTERM and SIGKILL. */
  killGraceMs: number;
  onOutput(stream: 'stdout' | 'stderr', data: Buffer): void;
}

export interface ProcessGroupExit {
  /** null when the shell was ended by a signal. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** The run's signal fired while the command ran. */
  aborted: boolean;
}

/**
 * Runs `/bin/sh -c command` as the leader of a new process group, so everything it starts can be
 * ended together: on abort, and also when the shell exits, since a background job left behind would
 * outlive the call and hold its output open. Ending is SIGTERM to the whole group, then SIGKILL.
 * Resolves once the output pipes close.
 */
export function runInProcessGroup(options: ProcessGroupOptions): Promise<ProcessGroupExit> {
  options.signal.throwIfAborted();
  return new Promise<ProcessGroupExit>((resolve, reject) => {
    const [program, ...args] = options.argv ?? ['/bin/sh', '-c', options.command];
    const child = spawn(program, args, {
      cwd: options.cwd,
      env: { ...options.env },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
    let aborted = false;
    let terminating = false;
    let settled = false;

    const signalGroup = (signal: NodeJS.Signals): void => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, signal);
      } catch {
        // ESRCH: every process of the group is already gone.
      }
    };
    const terminate = (): void => {
      if (terminating) return;
      terminating = true;
      signalGroup('SIGTERM');
      setTimeout(() => signalGroup('SIGKILL'), options.killGraceMs).unref();
    };
    const onAbort = (): void => {
      aborted = true;
      terminate();
    };
    const settle = (action: () => void): void => {
      if (settled) return;
      settled = true;
      options.signal.removeEventListener('abort', onAbort);
      action();
    };

    options.signal.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (data: Buffer) => options.onOutput('stdout', data));
    child.stderr.on('data', (data: Buffer) => options.onOutput('stderr', data));
    child.once('error', (err) => settle(() => reject(err)));
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      terminate();
    });
    child.once('close', (code: number | null, signal: NodeJS.Signals | null) => {
      const final = exit ?? { code, signal };
      settle(() => resolve({ exitCode: final.code, signal: final.signal, aborted }));
    });
  });
}
