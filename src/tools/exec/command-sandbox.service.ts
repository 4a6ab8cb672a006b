import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { applyLimits, MAX_FILE_BYTES, MAX_PROCESSES, type AppliedLimits } from './command-limits';
import { detectControlGroups, type CgroupHost, type ControlGroups } from './control-groups';
import { SANDBOX_PROGRAM, sandboxArgs, sandboxEnv, type SandboxSpec } from './sandbox';

/**
 * Whether commands can be sandboxed here, decided once at start-up by making a sandbox
 * (RUN_COMMAND_SANDBOX=auto); and the command line of each sandboxed, limited command.
 */
@Injectable()
export class CommandSandbox implements OnModuleInit {
  private readonly logger = new Logger('CommandSandbox');
  private state: { usable: boolean; why: string } = { usable: false, why: 'not checked yet' };
  private groups: ControlGroups = { kind: 'none', why: 'not checked yet' };
  /** The sandbox program (a test points it at one that does not exist). */
  protected readonly program: string = SANDBOX_PROGRAM;
  /** Where the control groups are read (a test points it at a fake /sys/fs/cgroup). */
  protected readonly cgroupHost: CgroupHost | undefined = undefined;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  onModuleInit(): void {
    if (!this.config.enableRunCommand) return;
    if (this.config.runCommandSandbox === 'off') {
      this.logger.warn(
        "RUN_COMMAND_SANDBOX=off: run_command runs commands WITHOUT a sandbox, as the server's own user, with access to every file that user can read. Use it only where every key holder may run anything on this machine.",
      );
      return;
    }
    this.state = probe(this.program);
    if (!this.state.usable) {
      this.logger.error(
        `run_command is not offered: no sandbox can be made here (${this.state.why}). Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) and allow user namespaces (in a container: see the README's "Commands run in a sandbox"), or set RUN_COMMAND_SANDBOX=off to run commands unsandboxed.`,
      );
      return;
    }
    this.groups = detectControlGroups(this.cgroupHost);
    this.logger.log(
      `commands run in a bubblewrap sandbox (network ${this.config.runCommandNetwork ? 'on' : 'off'}), files up to ${MAX_FILE_BYTES / 1024 / 1024} MiB, CPU up to the timeout`,
    );
    const say =
      this.groups.kind === 'none' ? this.logger.warn.bind(this.logger) : this.logger.log.bind(this.logger);
    say(this.limitsHeld);
  }

  /** Which memory and process limits hold for a command, and how (one line of the start-up log). */
  get limitsHeld(): string {
    const limits = `memory (${this.config.runCommandMemoryMb} MiB) and process (${MAX_PROCESSES}) limits`;
    switch (this.groups.kind) {
      case 'v2':
        return `commands: ${limits} per command tree via cgroup v2 at ${this.groups.parent}`;
      case 'v1':
        return `commands: ${limits} per command tree via cgroup v1 at ${this.groups.memory} and ${this.groups.pids}`;
      case 'none':
        return `commands: ${limits} per-process only (a command's children each get their own), because ${this.groups.why}`;
    }
  }

  /** Whether run_command may be offered: sandboxed here, or the operator turned the sandbox off. */
  get usable(): boolean {
    return this.config.runCommandSandbox === 'off' || this.state.usable;
  }

  /** Why no sandbox can be made here, when none can (for the start-up banner). */
  get unusableReason(): string | null {
    return this.usable ? null : this.state.why;
  }

  get sandboxed(): boolean {
    return this.config.runCommandSandbox !== 'off';
  }

  /** The command line of one command: the sandbox around `/bin/sh -c command`, inside its limits. */
  commandLine(spec: Omit<SandboxSpec, 'network'>, command: string, timeoutMs: number): AppliedLimits {
    const sandboxed = [
      this.program,
      ...sandboxArgs({ ...spec, network: this.config.runCommandNetwork }, command),
    ];
    return applyLimits(
      sandboxed,
      { memoryMb: this.config.runCommandMemoryMb, cpuSeconds: Math.max(1, Math.ceil(timeoutMs / 1000)) },
      this.groups,
    );
  }
}

/** Makes one sandbox and runs `true` in it: the only test that says it works on this machine. */
function probe(program: string): { usable: boolean; why: string } {
  const workspace = mkdtempSync(join(tmpdir(), 'loopwright-sandbox-probe-'));
  try {
    const result = spawnSync(
      program,
      sandboxArgs({ workspace, cwd: workspace, env: {}, network: false }, 'true'),
      { encoding: 'utf8', timeout: 10_000, env: sandboxEnv({ env: { PATH: '/usr/bin:/bin' } }) },
    );
    if (result.error) return { usable: false, why: `${program}: ${result.error.message}` };
    if (result.status !== 0) {
      return { usable: false, why: `${program} failed: ${result.stderr.trim() || `exit ${result.status}`}` };
    }
    return { usable: true, why: '' };
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}
