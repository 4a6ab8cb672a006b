import { ConfigError } from './env-reader';

/** A spending window: it rolls over at the start of each UTC hour, day or month. */
export type BudgetWindow = 'hour' | 'day' | 'month';

/** One limit of BUDGETS: `amount` USD or tokens (prompt + completion) per window. */
export interface BudgetLimit {
  amount: number;
  unit: 'usd' | 'tokens';
  window: BudgetWindow;
}

/**
 * BUDGETS: each key's limits; `fallback` (`*`) for every key without its own entry; an end user's
 * (`<key>/<end user>`), and each end user's of a key without one of their own (`<key>/*`).
 */
export interface Budgets {
  byKey: ReadonlyMap<string, readonly BudgetLimit[]>;
  fallback: readonly BudgetLimit[];
  /** By `<key>/<end user>`. */
  byEndUser: ReadonlyMap<string, readonly BudgetLimit[]>;
  /** By key: the limits of each of its end users without an entry of their own (`<key>/*`). */
  endUserFallback: ReadonlyMap<string, readonly BudgetLimit[]>;
}

/** A limit on one budget counter: a key's (`alice`) or one of its end users' (`alice/bob`) spend. */
export interface CounterLimit extends BudgetLimit {
  counter: string;
}

/**
 * The limits on a call of `owner`'s key for `endUser` (null: none), each on its counter: the key's
 * own entry (else `*`'s) on the counter named after the key, which every call of the key moves; then
 * the end user's (`<key>/<end user>`, else `<key>/*`) on the counter `<key>/<end user>`, which only
 * that end user's calls move.
 */
export function limitsOf(budgets: Budgets, owner: string, endUser: string | null): CounterLimit[] {
  const own = (budgets.byKey.get(owner) ?? budgets.fallback).map((l) => ({ ...l, counter: owner }));
  if (endUser === null) return own;
  const counter = `${owner}/${endUser}`;
  const endUsers = budgets.byEndUser.get(counter) ?? budgets.endUserFallback.get(owner) ?? [];
  return [...own, ...endUsers.map((l) => ({ ...l, counter }))];
}

/** How a limit reads in an answer: `alice/bob: 5 usd per day (BUDGETS)`. */
export function limitName(l: CounterLimit): string {
  return `${l.counter}: ${l.amount} ${l.unit} per ${l.window} (BUDGETS)`;
}

/** A price in USD per million tokens (MODEL_PRICES). */
export interface ModelPrice {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

/** Where and how traces are exported; null in AppConfig when no OTLP endpoint is set (no SDK starts). */
export interface TracingConfig {
  /** The full URL of the traces endpoint (`…/v1/traces`). */
  tracesUrl: string;
  protocol: 'http/json' | 'http/protobuf';
  headers: Readonly<Record<string, string>>;
  serviceName: string;
  /** Export timeout: a dead collector costs at most this, in the background. */
  timeoutMs: number;
  /** Record prompts, answers and tool arguments (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT). */
  captureContent: boolean;
}

type Env = Readonly<Record<string, string | undefined>>;

const BUDGET_ENTRY =
  /^([^=,\s/]+)(?:\/(\*|[A-Za-z0-9._@-]+))?=(\d+(?:\.\d+)?)(usd|tokens)\/(hour|day|month)$/;
const BUDGETS_ACCEPTED =
  'comma-separated key=<amount>usd|tokens/hour|day|month entries (key: a key name, *, <key>/<end user> or <key>/*; end user names of A-Z a-z 0-9 . _ @ -), e.g. alice=5usd/day,alice/*=1usd/day,*=1usd/day';

export function parseBudgets(value: string | undefined): Budgets {
  const byKey = new Map<string, BudgetLimit[]>();
  const fallback: BudgetLimit[] = [];
  const byEndUser = new Map<string, BudgetLimit[]>();
  const endUserFallback = new Map<string, BudgetLimit[]>();
  if (value === undefined || value.trim() === '') return { byKey, fallback, byEndUser, endUserFallback };
  for (const entry of value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = BUDGET_ENTRY.exec(entry);
    const amount = Number(m?.[3]);
    if (
      !m ||
      (m[1] === '*' && m[2] !== undefined) ||
      !Number.isFinite(amount) ||
      (m[4] === 'tokens' && !Number.isSafeInteger(amount))
    ) {
      throw new ConfigError('BUDGETS', BUDGETS_ACCEPTED, value);
    }
    const limit: BudgetLimit = { amount, unit: m[4] as BudgetLimit['unit'], window: m[5] as BudgetWindow };
    const [key, endUser] = [m[1], m[2]];
    const [map, name] =
      endUser === undefined
        ? [byKey, key]
        : endUser === '*'
          ? [endUserFallback, key]
          : [byEndUser, `${key}/${endUser}`];
    const list = key === '*' ? fallback : (map.get(name) ?? []);
    if (list.some((l) => l.unit === limit.unit && l.window === limit.window)) {
      throw new ConfigError(
        'BUDGETS',
        `${BUDGETS_ACCEPTED}; ${endUser === undefined ? key : `${key}/${endUser}`} has two ${limit.unit}/${limit.window} limits`,
        value,
      );
    }
    list.push(limit);
    if (key !== '*') map.set(name, list);
  }
  return { byKey, fallback, byEndUser, endUserFallback };
}

const PRICES_ACCEPTED =
  'a JSON object {"provider/model":{"input":3,"output":15,"cacheRead":0.3,"cacheWrite":3.75}} of USD per million tokens (input and output required, each a number ≥ 0)';

export function parseModelPrices(value: string | undefined): Record<string, ModelPrice> {
  if (value === undefined || value.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new ConfigError('MODEL_PRICES', PRICES_ACCEPTED, value);
  }
  if (!isObject(parsed)) throw new ConfigError('MODEL_PRICES', PRICES_ACCEPTED, value);
  const prices: Record<string, ModelPrice> = {};
  for (const [model, price] of Object.entries(parsed)) {
    const ok =
      /^[^/\s]+\/\S+$/.test(model) &&
      isObject(price) &&
      Object.keys(price).every((k) => ['input', 'output', 'cacheRead', 'cacheWrite'].includes(k)) &&
      isPrice(price.input) &&
      isPrice(price.output) &&
      (price.cacheRead === undefined || isPrice(price.cacheRead)) &&
      (price.cacheWrite === undefined || isPrice(price.cacheWrite));
    if (!ok) throw new ConfigError('MODEL_PRICES', `${PRICES_ACCEPTED}; ${model} is not`, value);
    prices[model] = price as unknown as ModelPrice;
  }
  return prices;
}

/**
 * The OTLP trace export from the standard variables, or null when neither endpoint is set: then no
 * OpenTelemetry SDK is started at all.
 */
export function parseTracing(env: Env): TracingConfig | null {
  const raw = (name: string) => {
    const v = env[name]?.trim();
    return v === undefined || v === '' ? undefined : v;
  };
  const tracesEndpoint = raw('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const endpoint = raw('OTEL_EXPORTER_OTLP_ENDPOINT');
  if (tracesEndpoint === undefined && endpoint === undefined) return null;
  // The signal-specific endpoint is used as given; the general one gets the signal's path appended.
  const tracesUrl = tracesEndpoint ?? `${endpoint!.replace(/\/+$/, '')}/v1/traces`;
  const name =
    tracesEndpoint === undefined ? 'OTEL_EXPORTER_OTLP_ENDPOINT' : 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT';
  if (!isHttpUrl(tracesUrl))
    throw new ConfigError(name, 'an http:// or https:// URL', tracesEndpoint ?? endpoint ?? '');
  const protocolValue =
    raw('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? raw('OTEL_EXPORTER_OTLP_PROTOCOL') ?? 'http/protobuf';
  if (protocolValue !== 'http/json' && protocolValue !== 'http/protobuf') {
    throw new ConfigError('OTEL_EXPORTER_OTLP_PROTOCOL', 'http/protobuf or http/json', protocolValue);
  }
  const timeoutValue =
    raw('OTEL_EXPORTER_OTLP_TRACES_TIMEOUT') ?? raw('OTEL_EXPORTER_OTLP_TIMEOUT') ?? '10000';
  const timeoutMs = Number(timeoutValue);
  if (!/^\d+$/.test(timeoutValue) || timeoutMs < 1 || timeoutMs > 600_000) {
    throw new ConfigError(
      'OTEL_EXPORTER_OTLP_TIMEOUT',
      'an integer of milliseconds from 1 to 600000',
      timeoutValue,
    );
  }
  const capture = raw('OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT') ?? 'false';
  if (capture !== 'true' && capture !== 'false') {
    throw new ConfigError('OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT', 'true or false', capture);
  }
  return {
    tracesUrl,
    protocol: protocolValue,
    headers:
      raw('OTEL_EXPORTER_OTLP_TRACES_HEADERS') === undefined
        ? parseHeaders('OTEL_EXPORTER_OTLP_HEADERS', raw('OTEL_EXPORTER_OTLP_HEADERS'))
        : parseHeaders('OTEL_EXPORTER_OTLP_TRACES_HEADERS', raw('OTEL_EXPORTER_OTLP_TRACES_HEADERS')),
    serviceName: raw('OTEL_SERVICE_NAME') ?? 'loopwright',
    timeoutMs,
    captureContent: capture === 'true',
  };
}

/** `key1=value1,key2=value2` (values URL-encoded), the OTLP exporters' header list. */
function parseHeaders(name: string, value: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  if (value === undefined) return headers;
  for (const pair of value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new ConfigError(name, 'comma-separated name=value pairs', value);
    try {
      headers[pair.slice(0, at).trim()] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      throw new ConfigError(name, 'comma-separated name=value pairs (URL-encoded values)', value);
    }
  }
  return headers;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isPrice(v: unknown): boolean {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0;
}

function isHttpUrl(v: string): boolean {
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}
