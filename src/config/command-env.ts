import { isSecretVariable } from './secret-variables';

/** What every command needs to behave like a normal shell session; nothing that identifies the server. */
const BASE_NAMES = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TERM', 'TZ'] as const;

/**
 * Variables that change which code a program loads or runs (preloads, startup scripts, shell hooks,
 * helper commands). Letting them through would let a command's environment hijack every process it
 * starts, so they are dropped even when the operator lists them.
 */
const HIJACKING_NAMES = new Set([
  'NODE_OPTIONS',
  'NODE_PATH',
  'NODE_REPL_EXTERNAL_MODULE',
  'BASH_ENV',
  'ENV',
  'SHELLOPTS',
  'BASHOPTS',
  'PS4',
  'PROMPT_COMMAND',
  'IFS',
  'CDPATH',
  'GLOBIGNORE',
  'PYTHONSTARTUP',
  'PYTHONPATH',
  'PYTHONHOME',
  'PYTHONINSPECT',
  'PERL5OPT',
  'PERL5LIB',
  'PERLLIB',
  'PERL5DB',
  'RUBYOPT',
  'RUBYLIB',
  'JAVA_TOOL_OPTIONS',
  '_JAVA_OPTIONS',
  'JDK_JAVA_OPTIONS',
  'GIT_SSH',
  'GIT_SSH_COMMAND',
  'GIT_ASKPASS',
  'SSH_ASKPASS',
  'GIT_EXEC_PATH',
  'GIT_EXTERNAL_DIFF',
  'GIT_PAGER',
  'GIT_EDITOR',
  'GIT_PROXY_COMMAND',
  'GIT_TEMPLATE_DIR',
  'PAGER',
  'EDITOR',
  'VISUAL',
  'BROWSER',
  'MANPAGER',
  'LESSOPEN',
  'LESSCLOSE',
]);

const HIJACKING_PREFIXES = ['LD_', 'DYLD_', 'GIT_CONFIG', 'BASH_FUNC_'];

/**
 * Never passed on, even when the operator lists it: a secret of the server (every variable of
 * SECRET_VARIABLES), a variable MCP_CONFIG substitutes into an MCP server's settings (`mcpSecrets`:
 * what an MCP server is given is its secret, not every command's), or a start-up hijacker.
 */
export function isForbiddenCommandEnvName(
  name: string,
  mcpSecrets: ReadonlySet<string> = new Set(),
): boolean {
  return (
    isSecretVariable(name) ||
    mcpSecrets.has(name) ||
    HIJACKING_NAMES.has(name) ||
    HIJACKING_PREFIXES.some((prefix) => name.startsWith(prefix))
  );
}

/**
 * The environment `run_command` gets: the base allow-list plus the names the operator adds, minus
 * what isForbiddenCommandEnvName keeps back. Computed once at start-up so only `src/config` reads
 * the server's environment.
 */
export function buildCommandEnv(
  env: Readonly<Record<string, string | undefined>>,
  extraNames: readonly string[],
  mcpSecrets: ReadonlySet<string> = new Set(),
): Record<string, string> {
  const commandEnv: Record<string, string> = {};
  for (const name of [...BASE_NAMES, ...extraNames]) {
    const value = env[name];
    if (value === undefined || isForbiddenCommandEnvName(name, mcpSecrets)) continue;
    commandEnv[name] = value;
  }
  return commandEnv;
}
