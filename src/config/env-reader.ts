import { AgentsConfigProblem, loadAgents, type AgentConfig } from './agents-config';
import { loadMcpServers, McpConfigProblem, type McpServerConfig } from './mcp-config';
import { shownValue } from './secret-variables';

/** What TOOL_POLICY may say of a tool (AppConfig.toolPolicy). */
export type ToolPolicy = 'allow' | 'confirm' | 'deny';

/** The environment as start-up reads it. */
export type Env = Readonly<Record<string, string | undefined>>;

/**
 * A variable whose value is not accepted; start-up stops with its message. The value is quoted as
 * shownValue allows: a secret variable's redacted (config/secret-variables.ts), whoever refuses it.
 */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    accepted: string,
    value: string,
  ) {
    super(
      `${variable}=${JSON.stringify(shownValue(variable, value))} is not accepted: ${variable} accepts ${accepted}`,
    );
    this.name = 'ConfigError';
  }
}

/**
 * One variable of the environment read as its type, or a ConfigError naming it and what it accepts
 * (loadConfig assembles AppConfig from these).
 */
export class EnvReader {
  constructor(private readonly env: Env) {}

  private raw(name: string): string | undefined {
    const v = this.env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  }

  string(name: string, fallback: string): string {
    return this.raw(name) ?? fallback;
  }

  optional(name: string, ok: (v: string) => boolean, accepted: string): string | null {
    const v = this.raw(name);
    if (v === undefined) return null;
    if (!ok(v)) throw new ConfigError(name, accepted, v);
    return v;
  }

  int(name: string, fallback: number, min: number, max: number): number {
    const v = this.raw(name);
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!/^\d+$/.test(v) || !Number.isSafeInteger(n) || n < min || n > max) {
      throw new ConfigError(name, `an integer from ${min} to ${max}`, v);
    }
    return n;
  }

  /** A number above 0 and at most 1. */
  fraction(name: string, fallback: number): number {
    const v = this.raw(name);
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!/^(0|1)?(\.\d+)?$/.test(v) || !(n > 0 && n <= 1)) {
      throw new ConfigError(name, 'a number above 0 and at most 1', v);
    }
    return n;
  }

  ms(name: string, fallback: number): number {
    return this.int(name, fallback, 1000, 2_147_483_647);
  }

  bool(name: string, fallback: boolean): boolean {
    const v = this.raw(name);
    if (v === undefined) return fallback;
    if (v === 'true' || v === '1') return true;
    if (v === 'false' || v === '0') return false;
    throw new ConfigError(name, 'true or false', v);
  }

  oneOf<T extends string>(name: string, values: readonly T[], fallback: T): T {
    const v = this.raw(name);
    if (v === undefined) return fallback;
    if (!(values as readonly string[]).includes(v)) throw new ConfigError(name, values.join(', '), v);
    return v as T;
  }

  list(name: string, item: RegExp, accepted: string): string[] {
    const v = this.raw(name);
    if (v === undefined) return [];
    const items = v
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    if (items.some((s) => !item.test(s))) throw new ConfigError(name, accepted, v);
    return items;
  }

  /** A JSON object of header names to string values. */
  headers(name: string): Record<string, string> {
    const v = this.raw(name);
    if (v === undefined) return {};
    const accepted = 'a JSON object of HTTP header names to string values';
    let parsed: unknown;
    try {
      parsed = JSON.parse(v);
    } catch {
      throw new ConfigError(name, accepted, v);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new ConfigError(name, accepted, v);
    }
    const headers: Record<string, string> = {};
    for (const [key, value] of Object.entries(parsed)) {
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(key) || typeof value !== 'string' || /[\r\n\0]/.test(value)) {
        throw new ConfigError(name, accepted, v);
      }
      headers[key] = value;
    }
    return headers;
  }

  apiKeys(name: string): Map<string, string> | null {
    const v = this.raw(name);
    if (v === undefined) return null;
    const keys = new Map<string, string>();
    for (const pair of v
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      const at = pair.indexOf(':');
      const keyName = pair.slice(0, at);
      const secret = pair.slice(at + 1);
      if (at <= 0 || secret === '' || keyName.trim() === '' || keys.has(secret)) {
        throw new ConfigError(name, 'comma-separated name:secret pairs with distinct secrets', v);
      }
      keys.set(secret, keyName);
    }
    if (keys.size === 0) throw new ConfigError(name, 'comma-separated name:secret pairs', v);
    return keys;
  }

  /** `<server>__*` entries must name a configured MCP server: a typo would silently change nothing. */
  toolPolicy(name: string, mcpServers: ReadonlySet<string>): Record<string, ToolPolicy> {
    const accepted = 'tool=allow|confirm|deny (or <mcp server>__*=…), comma-separated';
    const policy: Record<string, ToolPolicy> = {};
    for (const entry of this.list(name, /^[A-Za-z0-9_-]+(__\*)?=(allow|confirm|deny)$/, accepted)) {
      const [tool, value] = entry.split('=') as [string, ToolPolicy];
      if (tool.endsWith('__*') && !mcpServers.has(tool.slice(0, -3))) {
        throw new ConfigError(
          name,
          `${accepted}; ${tool} names no server of MCP_CONFIG`,
          this.raw(name) ?? '',
        );
      }
      policy[tool] = value;
    }
    return policy;
  }

  /** MCP_CONFIG's servers; the variables substituted into them are added to `substituted`. */
  mcpServers(
    name: string,
    env: Env,
    defaultTimeoutMs: number,
    cwd: string,
    substituted: Set<string>,
  ): McpServerConfig[] {
    const file = this.raw(name);
    if (file === undefined) return [];
    try {
      return loadMcpServers(file, env, defaultTimeoutMs, cwd, substituted);
    } catch (err) {
      if (err instanceof McpConfigProblem) {
        throw new ConfigError(name, `a JSON file of MCP servers (see the README); ${err.message}`, file);
      }
      throw err;
    }
  }

  /** AGENTS_CONFIG's agents (empty without it). */
  agents(name: string, cwd: string, maxIterations: number): AgentConfig[] {
    const file = this.raw(name);
    if (file === undefined) return [];
    try {
      return loadAgents(file, cwd, maxIterations);
    } catch (err) {
      if (err instanceof AgentsConfigProblem) {
        throw new ConfigError(name, `a JSON file of named agents (see docs/agents.md); ${err.message}`, file);
      }
      throw err;
    }
  }
}
