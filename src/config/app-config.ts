import { isAbsolute, resolve } from 'node:path';
import type { AgentConfig } from './agents-config';
import { buildCommandEnv } from './command-env';
import { ConfigError, EnvReader, type Env, type ToolPolicy } from './env-reader';
import type { McpServerConfig } from './mcp-config';
import { ENDPOINT_NAMES, secretValuesOf, type EndpointName } from './secret-variables';
import {
  parseBudgets,
  parseModelPrices,
  parseTracing,
  type Budgets,
  type ModelPrice,
  type TracingConfig,
} from './team-config';

export type SessionMode = 'safe' | 'write' | 'exec';
export type { ToolPolicy } from './env-reader';
export type OnDisconnect = 'continue' | 'cancel';
/** How hard a model that can reason is asked to (LLM_REASONING, a session's `reasoning`). */
export type ReasoningLevel = 'off' | 'low' | 'medium' | 'high';
export const REASONING_LEVELS: readonly ReasoningLevel[] = ['off', 'low', 'medium', 'high'];

/** The whole environment, validated once at start-up. Nothing else reads `process.env`. */
export interface AppConfig {
  port: number;
  host: string;
  databaseUrl: string | null;
  /** How long start-up keeps trying to reach the database before it gives up. */
  databaseConnectTimeoutMs: number;
  dataDir: string;
  llm: {
    /**
     * Each model API's key and base URL (`<NAME>_API_KEY`, `<NAME>_BASE_URL`, null when unset), for
     * every endpoint config/secret-variables.ts declares: the providers' definitions read their own.
     */
    endpoints: Readonly<Record<EndpointName, Endpoint>>;
    model: string;
    maxRetries: number;
    idleTimeoutMs: number;
    /** The most answer text (UTF-8 bytes of text deltas) one model call may stream before it is cut. */
    answerMaxBytes: number;
    /** LLM_HEADERS: extra HTTP headers on every model request of every provider. */
    headers: Readonly<Record<string, string>>;
    /** LLM_FALLBACK_MODELS, in order (names as written; checked by llm/ at start-up). */
    fallbackModels: readonly string[];
    /** LLM_MODELS: what a session may name (`provider/model` or `provider/*`); empty = any. */
    models: readonly string[];
    /** LLM_REASONING: the default of a session's `reasoning`. */
    reasoning: ReasoningLevel;
    /** LLM_MAX_OUTPUT_TOKENS: the most one model call may produce. */
    maxOutputTokens: number;
  };
  workspaceRoot: string;
  /** Whose files a session's tools see: one workspace for all, one per key, or one per session. */
  workspaceScope: 'shared' | 'key' | 'session';
  /** secret → key name; null when auth is off. */
  apiKeys: ReadonlyMap<string, string> | null;
  maxIterations: number;
  toolTimeoutMs: number;
  approvalTimeoutMs: number;
  onDisconnect: OnDisconnect;
  enableRunCommand: boolean;
  runCommandMaxTimeoutMs: number;
  runCommandMaxConcurrent: number;
  /** Background commands (`run_command` with `background: true`) one session may have running at once. */
  runCommandMaxBackground: number;
  /** `auto`: every command in a bubblewrap sandbox (run_command is not offered where none can be made); `off`: none. */
  runCommandSandbox: 'auto' | 'off';
  /** Sandboxed commands may reach the network (the host's, loopback included). */
  runCommandNetwork: boolean;
  /** Memory of one command with everything it starts, in MiB. */
  runCommandMemoryMb: number;
  /** Extra variable names the operator lets through to `run_command` (dangerous ones are dropped anyway). */
  runCommandEnv: readonly string[];
  /** The environment `run_command` gets: allow-listed, secrets and start-up hijackers removed (buildCommandEnv). */
  commandEnv: Readonly<Record<string, string>>;
  /** Per-tool overrides; `<server>__*` keys apply to every tool of that MCP server. */
  toolPolicy: Readonly<Record<string, ToolPolicy>>;
  /** MCP_CONFIG's servers, validated and interpolated (empty without MCP_CONFIG). */
  mcpServers: readonly McpServerConfig[];
  /** AGENTS_CONFIG's named agents (empty without it); tools and models checked by agents/ at start-up. */
  agents: readonly AgentConfig[];
  /** How many levels of delegation below the client's run (level 0); a run at the last level cannot delegate. */
  agentMaxDepth: number;
  /** How many delegations of one step run at once. */
  agentMaxParallel: number;
  readMaxBytes: number;
  toolOutputMaxBytes: number;
  bodyLimitBytes: number;
  /** The largest uploaded file (POST /v1/files, and a data URL in a prompt); BODY_LIMIT_BYTES does not apply there. */
  fileMaxBytes: number;
  rateLimitRunsPerMinute: number;
  maxActiveRunsPerKey: number;
  /** Prompts that may wait for a session's active run (`onActive: "enqueue"`, SESSION_MAX_QUEUE). */
  sessionMaxQueue: number;
  maxActiveRuns: number;
  maxOpenStreams: number;
  corsOrigins: readonly string[];
  /** The context window assumed for a model the registry does not know (LLM_CONTEXT_TOKENS). */
  contextTokens: number;
  /** The share of the window above which older context is pruned, then summarized (COMPACT_AT). */
  compactAt: number;
  /** Recover `<tool_call>{…}</tool_call>` written into text by models served without a tool parser. */
  toolCallTextRecovery: boolean;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Log prompts and tool output (off by default). */
  logContent: boolean;
  /** How start-up reports itself: `pretty` text for a person, `json` lines for a collector; `auto`: pretty on a terminal. */
  logFormat: 'auto' | 'pretty' | 'json';
  shutdownGraceMs: number;
  /** A `: ping` comment after this much silence on a stream (15 s by the contract; tests shorten it). */
  ssePingMs: number;
  /** How long a process's claim on a running run lasts without renewal; a dead process's runs are taken over after it. */
  runLeaseMs: number;
  /** How often one run may be taken over after losing its process; the next loss fails it (RUN_ABANDONED). */
  runMaxResumes: number;
  /** BUDGETS: spending limits per key and window. */
  budgets: Budgets;
  /** MODEL_PRICES: USD per million tokens by `provider/model`, over the built-in table. */
  modelPrices: Readonly<Record<string, ModelPrice>>;
  /** ADMIN_KEYS: key names that may read every key's usage. */
  adminKeys: ReadonlySet<string>;
  /** WEBHOOK_ALLOW_PRIVATE: webhooks may reach loopback, private and link-local addresses. */
  webhookAllowPrivate: boolean;
  /** WEBHOOK_RETENTION_HOURS: how long given-up events and attempts are kept. */
  webhookRetentionHours: number;
  /** OTLP trace export (the OTEL_* variables); null when no endpoint is set. */
  tracing: TracingConfig | null;
  /**
   * Every secret value configured (config/secret-variables.ts says where each variable holds them,
   * plus what MCP_CONFIG substitutes): taken out of text the server relays but did not write.
   */
  secretValues: readonly string[];
}

export { ConfigError };

/** A model API's settings: its key and base URL as set (null when unset). */
export interface Endpoint {
  apiKey: string | null;
  baseUrl: string | null;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Reads and validates every variable; throws a ConfigError naming the first bad one. */
export function loadConfig(env: Env, cwd = process.cwd()): AppConfig {
  const read = new EnvReader(env);
  const apiKeys = read.apiKeys('API_KEYS');
  const host = read.string('HOST', '127.0.0.1');
  const runCommandEnv = read.list(
    'RUN_COMMAND_ENV',
    /^[A-Za-z_][A-Za-z0-9_]*$/,
    'comma-separated variable names',
  );
  const toolTimeoutMs = read.ms('TOOL_TIMEOUT_MS', 30_000);
  const mcpSecrets = new Set<string>();
  const mcpServers = read.mcpServers('MCP_CONFIG', env, toolTimeoutMs, cwd, mcpSecrets);
  const maxIterations = read.int('MAX_ITERATIONS', 10, 1, 1000);
  const toolPolicy = read.toolPolicy('TOOL_POLICY', new Set(mcpServers.map((s) => s.name)));
  const budgets = parseBudgets(env.BUDGETS);
  const adminKeys = new Set(read.list('ADMIN_KEYS', /^[^\s,:]+$/, 'comma-separated key names'));
  // A key name that names no key of API_KEYS is a typo that would silently limit or allow nobody.
  // Without API_KEYS everything belongs to the one key `local` (auth/request-owner's LOCAL_OWNER).
  const keyNames = new Set(apiKeys?.values() ?? ['local']);
  const unknownBudget = [
    ...budgets.byKey.keys(),
    ...budgets.endUserFallback.keys(),
    ...[...budgets.byEndUser.keys()].map((k) => k.slice(0, k.indexOf('/'))),
  ].find((k) => !keyNames.has(k));
  if (unknownBudget !== undefined) {
    throw new ConfigError(
      'BUDGETS',
      `entries for key names of API_KEYS (or *); ${unknownBudget} is none`,
      env.BUDGETS ?? '',
    );
  }
  const unknownAdmin = [...adminKeys].find((k) => !keyNames.has(k));
  if (unknownAdmin !== undefined) {
    throw new ConfigError(
      'ADMIN_KEYS',
      `key names of API_KEYS; ${unknownAdmin} is none`,
      env.ADMIN_KEYS ?? '',
    );
  }
  if (apiKeys === null && !isLoopbackHost(host)) {
    throw new ConfigError(
      'HOST',
      'only a loopback address (127.0.0.1, ::1, localhost) while API_KEYS is unset: without keys anyone who can reach the port could drive the agent',
      host,
    );
  }
  return {
    port: read.int('PORT', 3000, 0, 65535),
    host,
    databaseUrl: read.optional(
      'DATABASE_URL',
      (v) => /^postgres(ql)?:\/\//.test(v),
      'a postgres:// or postgresql:// URL',
    ),
    databaseConnectTimeoutMs: read.ms('DATABASE_CONNECT_TIMEOUT_MS', 30_000),
    dataDir: resolve(cwd, read.string('DATA_DIR', './.data')),
    llm: {
      endpoints: Object.fromEntries(
        ENDPOINT_NAMES.map((name) => [
          name,
          {
            apiKey: read.optional(`${name}_API_KEY`, () => true, 'any non-empty secret'),
            baseUrl: read.optional(`${name}_BASE_URL`, isHttpUrl, 'an http:// or https:// URL'),
          },
        ]),
      ) as Record<EndpointName, Endpoint>,
      model: read.string('LLM_MODEL', 'gpt-4.1-mini'),
      maxRetries: read.int('LLM_MAX_RETRIES', 2, 0, 10),
      idleTimeoutMs: read.ms('LLM_IDLE_TIMEOUT_MS', 120_000),
      answerMaxBytes: read.int('ANSWER_MAX_BYTES', 1_048_576, 1, 1024 * 1024 * 1024),
      headers: read.headers('LLM_HEADERS'),
      fallbackModels: read.list('LLM_FALLBACK_MODELS', MODEL_NAME, 'comma-separated provider/model names'),
      models: read.list('LLM_MODELS', MODEL_NAME, 'comma-separated provider/model names or provider/*'),
      reasoning: read.oneOf('LLM_REASONING', REASONING_LEVELS, 'off'),
      maxOutputTokens: read.int('LLM_MAX_OUTPUT_TOKENS', 16_384, 1, 10_000_000),
    },
    workspaceRoot: resolvePath(cwd, read.string('WORKSPACE_ROOT', './workspace')),
    workspaceScope: read.oneOf('WORKSPACE_SCOPE', ['shared', 'key', 'session'] as const, 'shared'),
    apiKeys,
    maxIterations,
    toolTimeoutMs,
    approvalTimeoutMs: read.ms('APPROVAL_TIMEOUT_MS', 600_000),
    onDisconnect: read.oneOf('ON_DISCONNECT', ['continue', 'cancel'] as const, 'continue'),
    enableRunCommand: read.bool('ENABLE_RUN_COMMAND', false),
    runCommandMaxTimeoutMs: read.ms('RUN_COMMAND_MAX_TIMEOUT_MS', 600_000),
    runCommandMaxConcurrent: read.int('RUN_COMMAND_MAX_CONCURRENT', 4, 1, 1000),
    runCommandMaxBackground: read.int('RUN_COMMAND_MAX_BACKGROUND', 4, 1, 1000),
    runCommandSandbox: read.oneOf('RUN_COMMAND_SANDBOX', ['auto', 'off'] as const, 'auto'),
    runCommandNetwork: read.bool('RUN_COMMAND_NETWORK', false),
    runCommandMemoryMb: read.int('RUN_COMMAND_MEMORY_MB', 1024, 16, 1_048_576),
    runCommandEnv,
    commandEnv: buildCommandEnv(env, runCommandEnv, mcpSecrets),
    toolPolicy,
    mcpServers,
    agents: read.agents('AGENTS_CONFIG', cwd, maxIterations),
    agentMaxDepth: read.int('AGENT_MAX_DEPTH', 2, 0, 16),
    agentMaxParallel: read.int('AGENT_MAX_PARALLEL', 4, 1, 64),
    readMaxBytes: read.int('READ_MAX_BYTES', 262_144, 1024, 64 * 1024 * 1024),
    toolOutputMaxBytes: read.int('TOOL_OUTPUT_MAX_BYTES', 262_144, 1024, 64 * 1024 * 1024),
    bodyLimitBytes: read.int('BODY_LIMIT_BYTES', 1_048_576, 1024, 1024 * 1024 * 1024),
    fileMaxBytes: read.int('FILE_MAX_BYTES', 20_971_520, 1024, 1024 * 1024 * 1024),
    rateLimitRunsPerMinute: read.int('RATE_LIMIT_RUNS_PER_MINUTE', 120, 1, 1_000_000),
    maxActiveRunsPerKey: read.int('MAX_ACTIVE_RUNS_PER_KEY', 16, 1, 1_000_000),
    sessionMaxQueue: read.int('SESSION_MAX_QUEUE', 8, 0, 10_000),
    maxActiveRuns: read.int('MAX_ACTIVE_RUNS', 512, 1, 1_000_000),
    maxOpenStreams: read.int('MAX_OPEN_STREAMS', 2048, 1, 1_000_000),
    corsOrigins: read.list(
      'CORS_ORIGINS',
      /^(\*|https?:\/\/[^\s,/]+)$/,
      'comma-separated origins such as https://app.example.com',
    ),
    contextTokens: read.int('LLM_CONTEXT_TOKENS', 128_000, 1000, 100_000_000),
    compactAt: read.fraction('COMPACT_AT', 0.8),
    toolCallTextRecovery: read.bool('TOOL_CALL_TEXT_RECOVERY', false),
    logLevel: read.oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    logContent: read.bool('LOG_CONTENT', false),
    logFormat: read.oneOf('LOG_FORMAT', ['auto', 'pretty', 'json'] as const, 'auto'),
    shutdownGraceMs: read.ms('SHUTDOWN_GRACE_MS', 10_000),
    ssePingMs: read.ms('SSE_PING_MS', 15_000),
    runLeaseMs: read.ms('RUN_LEASE_MS', 10_000),
    runMaxResumes: read.int('RUN_MAX_RESUMES', 3, 0, 1_000_000),
    budgets,
    modelPrices: parseModelPrices(env.MODEL_PRICES),
    adminKeys,
    webhookAllowPrivate: read.bool('WEBHOOK_ALLOW_PRIVATE', false),
    webhookRetentionHours: read.int('WEBHOOK_RETENTION_HOURS', 24, 1, 87_600),
    tracing: parseTracing(env),
    secretValues: secretValuesOf(env, mcpSecrets),
  };
}

export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h.endsWith('.localhost') || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}

/** A model name as written in LLM_MODEL-like lists: no spaces, no empty segment. */
const MODEL_NAME = /^[^\s/,]+(\/[^\s/,]+)*$/;

function isHttpUrl(v: string): boolean {
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

function resolvePath(cwd: string, p: string): string {
  return isAbsolute(p) ? resolve(p) : resolve(cwd, p);
}
