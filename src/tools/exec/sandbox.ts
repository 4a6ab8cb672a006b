import { existsSync, lstatSync, readlinkSync } from 'node:fs';

/** What one sandboxed command may see and do. */
export interface SandboxSpec {
  /** The session's workspace: bound read-write at the same absolute path. */
  workspace: string;
  /** Where the command starts (inside the workspace). */
  cwd: string;
  /** The command's whole environment (HOME is set to the sandbox's own). */
  env: Readonly<Record<string, string>>;
  /** The host's network, loopback included; otherwise none at all. */
  network: boolean;
}

export const SANDBOX_PROGRAM = 'bwrap';
/** HOME inside the sandbox: its private, empty /tmp. */
export const SANDBOX_HOME = '/tmp';

/** Top-level folders of the system's programs and libraries, read-only (or their symlinks, as on merged-/usr systems). */
const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
/** The few /etc files programs need to run: users, the loader, locales, time zone, certificates, alternatives. */
const ETC_FILES = [
  '/etc/passwd',
  '/etc/group',
  '/etc/nsswitch.conf',
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/alternatives',
  '/etc/localtime',
  '/etc/ssl',
  '/etc/ca-certificates',
  '/etc/mime.types',
];
/** Name resolution, only when the command has the network. */
const NETWORK_ETC_FILES = ['/etc/resolv.conf', '/etc/hosts', '/etc/host.conf', '/etc/gai.conf'];

/**
 * The bubblewrap command line around `/bin/sh -c <command>`: new PID, mount, IPC, UTS and (without
 * the network) network namespaces; no capabilities; the workspace read-write; the system's programs
 * read-only; a private /tmp, a fresh /proc, a minimal /dev; no other path of the host — not the
 * server's files, its DATA_DIR or its .env. Start it with `sandboxEnv(spec)` as its whole environment. `--die-with-parent` and the PID
 * namespace end everything the command started (`setsid` and `nohup` included) when it ends.
 */
export function sandboxArgs(spec: SandboxSpec, command: string): string[] {
  const args = [
    '--die-with-parent',
    '--new-session',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    ...(spec.network ? [] : ['--unshare-net']),
    '--cap-drop',
    'ALL',
    '--hostname',
    'sandbox',
  ];
  for (const dir of SYSTEM_DIRS) args.push(...systemPath(dir));
  for (const file of [...ETC_FILES, ...(spec.network ? NETWORK_ETC_FILES : [])]) {
    args.push('--ro-bind-try', file, file);
  }
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
  args.push('--bind', spec.workspace, spec.workspace, '--chdir', spec.cwd);
  args.push('--', '/bin/sh', '-c', command);
  return args;
}

/**
 * The environment to start the sandbox with (bubblewrap passes it on): the allow-list and the
 * sandbox's HOME. Given as the process's environment rather than `--setenv` arguments, so that no
 * value shows in the host's process list.
 */
export function sandboxEnv(spec: Pick<SandboxSpec, 'env'>): Record<string, string> {
  return { ...spec.env, HOME: SANDBOX_HOME };
}

/** A system folder as it is on the host: a symlink stays a symlink (merged /usr), a folder is bound read-only. */
function systemPath(path: string): string[] {
  if (!existsSync(path)) return [];
  const stat = lstatSync(path);
  if (stat.isSymbolicLink()) return ['--symlink', readlinkSync(path), path];
  return ['--ro-bind', path, path];
}
