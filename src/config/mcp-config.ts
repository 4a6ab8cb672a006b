import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { isSecretVariable } from './secret-variables';

type Env = Readonly<Record<string, string | undefined>>;

interface McpServerBase {
  /** `[A-Za-z0-9_-]+`; the prefix of its tools' names (`<name>__<tool>`). */
  name: string;
  /** MCP tool names to offer; null offers every tool the server lists. */
  tools: readonly string[] | null;
  timeoutMs: number;
}

export interface McpStdioServerConfig extends McpServerBase {
  transport: 'stdio';
  command: string;
  args: readonly string[];
  /** The whole environment the child gets: the minimal inherited names plus its configured `env`. */
  env: Readonly<Record<string, string>>;
  cwd: string | null;
}

export interface McpHttpServerConfig extends McpServerBase {
  transport: 'http';
  url: string;
  headers: Readonly<Record<string, string>>;
}

export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

/** What a stdio server inherits from ours (what sudo keeps); nothing that could carry a secret. */
const INHERITED_NAMES = ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'] as const;

const SERVER_NAME = /^[A-Za-z0-9_-]+$/;
const MAX_MS = 2_147_483_647;

/** A problem with the MCP_CONFIG file; the loader turns it into a ConfigError naming MCP_CONFIG. */
export class McpConfigProblem extends Error {}

/**
 * Reads and validates the `mcpServers` file. `${NAME}` in string values is replaced from `env`
 * (a missing variable is a problem naming it); server secrets may not be interpolated at all.
 * Each name replaced is added to `substituted` (an MCP server's secrets, kept from `run_command`).
 */
export function loadMcpServers(
  file: string,
  env: Env,
  defaultTimeoutMs: number,
  cwd: string,
  substituted = new Set<string>(),
): McpServerConfig[] {
  let text: string;
  try {
    text = readFileSync(resolve(cwd, file), 'utf8');
  } catch (err) {
    throw new McpConfigProblem(`the file cannot be read (${(err as Error).message})`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new McpConfigProblem(`the file is not JSON (${(err as Error).message})`);
  }
  return parseMcpServers(parsed, env, defaultTimeoutMs, cwd, substituted);
}

/** Validates an already parsed `{ "mcpServers": { … } }` document. */
export function parseMcpServers(
  document: unknown,
  env: Env,
  defaultTimeoutMs: number,
  cwd: string,
  substituted = new Set<string>(),
): McpServerConfig[] {
  if (!isRecord(document) || !isRecord(document.mcpServers)) {
    throw new McpConfigProblem('the file must be an object with an "mcpServers" object');
  }
  const interpolated = interpolate(document.mcpServers, env, 'mcpServers', substituted) as Record<
    string,
    unknown
  >;
  const servers: McpServerConfig[] = [];
  for (const [name, raw] of Object.entries(interpolated)) {
    servers.push(parseServer(name, raw, env, defaultTimeoutMs, cwd));
  }
  refuseAmbiguousPrefixes(servers);
  return servers;
}

function parseServer(
  name: string,
  raw: unknown,
  env: Env,
  defaultTimeoutMs: number,
  cwd: string,
): McpServerConfig {
  const at = `mcpServers.${name}`;
  if (!SERVER_NAME.test(name)) throw new McpConfigProblem(`${at}: server names must match [A-Za-z0-9_-]+`);
  if (!isRecord(raw)) throw new McpConfigProblem(`${at} must be an object`);
  const tools = optionalStrings(raw.tools, `${at}.tools`);
  const timeoutMs = raw.timeoutMs === undefined ? defaultTimeoutMs : raw.timeoutMs;
  if (
    typeof timeoutMs !== 'number' ||
    !Number.isInteger(timeoutMs) ||
    timeoutMs < 1000 ||
    timeoutMs > MAX_MS
  ) {
    throw new McpConfigProblem(`${at}.timeoutMs must be an integer from 1000 to ${MAX_MS}`);
  }
  const base = { name, tools, timeoutMs };
  const hasCommand = raw.command !== undefined;
  const hasUrl = raw.url !== undefined;
  if (hasCommand === hasUrl) throw new McpConfigProblem(`${at} needs exactly one of "command" or "url"`);
  if (hasCommand) {
    if (typeof raw.command !== 'string' || raw.command.trim() === '') {
      throw new McpConfigProblem(`${at}.command must be a non-empty string`);
    }
    if (raw.cwd !== undefined && typeof raw.cwd !== 'string')
      throw new McpConfigProblem(`${at}.cwd must be a string`);
    const configured = stringMap(raw.env, `${at}.env`);
    const inherited: Record<string, string> = {};
    for (const key of INHERITED_NAMES) {
      const value = env[key];
      // A value starting with "()" is an exported shell function: code, not data.
      if (value !== undefined && !value.startsWith('()')) inherited[key] = value;
    }
    return {
      ...base,
      transport: 'stdio',
      command: raw.command,
      args: optionalStrings(raw.args, `${at}.args`) ?? [],
      env: { ...inherited, ...configured },
      cwd: typeof raw.cwd === 'string' ? (isAbsolute(raw.cwd) ? raw.cwd : resolve(cwd, raw.cwd)) : null,
    };
  }
  if (typeof raw.url !== 'string' || !isHttpUrl(raw.url)) {
    throw new McpConfigProblem(`${at}.url must be an http:// or https:// URL`);
  }
  return { ...base, transport: 'http', url: raw.url, headers: stringMap(raw.headers, `${at}.headers`) };
}

/**
 * `a` and `a__b` (or `a` and `a_`) could both produce `a__b__c`: such a pair is refused at start-up,
 * so two servers can never offer the same name (the rest is checked when tools are listed).
 */
function refuseAmbiguousPrefixes(servers: readonly McpServerConfig[]): void {
  for (const a of servers) {
    for (const b of servers) {
      if (a !== b && `${b.name}__`.startsWith(`${a.name}__`)) {
        throw new McpConfigProblem(
          `servers ${a.name} and ${b.name} could offer tools with the same name; rename one of them`,
        );
      }
    }
  }
}

/** Replaces `${NAME}` in every string value (keys untouched); no defaults, no escapes. */
function interpolate(value: unknown, env: Env, at: string, substituted: Set<string>): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$\{([^}]*)\}/g, (_match, name: string) => {
      if (isSecretVariable(name)) {
        throw new McpConfigProblem(
          `${at} uses \${${name}}, a secret of this server that MCP servers never get`,
        );
      }
      const replacement = env[name];
      if (replacement === undefined) {
        throw new McpConfigProblem(`${at} uses \${${name}}, but ${name} is not set in the environment`);
      }
      substituted.add(name);
      return replacement;
    });
  }
  if (Array.isArray(value)) return value.map((item, i) => interpolate(item, env, `${at}.${i}`, substituted));
  if (isRecord(value)) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value))
      out[key] = interpolate(item, env, `${at}.${key}`, substituted);
    return out;
  }
  return value;
}

function optionalStrings(value: unknown, at: string): string[] | null {
  if (value === undefined) return null;
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
    throw new McpConfigProblem(`${at} must be an array of strings`);
  }
  return value as string[];
}

function stringMap(value: unknown, at: string): Record<string, string> {
  if (value === undefined) return {};
  if (!isRecord(value) || Object.values(value).some((v) => typeof v !== 'string')) {
    throw new McpConfigProblem(`${at} must be an object of strings`);
  }
  return { ...(value as Record<string, string>) };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isHttpUrl(v: string): boolean {
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}
