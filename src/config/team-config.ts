import { ConfigError } from './env-reader';

/** A spending window: it rolls over at the start of each UTC hour, day or month. */
export type BudgetWindow = 'hour' | 'day' | 'month';

/** One limit of BUDGETS: `amount` USD or tokens (prompt + completion) per window. */
export interface BudgetLimit {
  amount: number;
  unit: 'usd' | 'tokens';
  window: BudgetWindow;
}

/** BUDGETS: each key's limits; `fallback` (`*`) for every key without its own entry. */
export interface Budgets {
  byKey: ReadonlyMap<string, readonly BudgetLimit[]>;
  fallback: readonly BudgetLimit[];
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

const BUDGET_ENTRY = /^([^=,\s]+)=(\d+(?:\.\d+)?)(usd|tokens)\/(hour|day|month)$/;
const BUDGETS_ACCEPTED =
  'comma-separated key=<amount>usd|tokens/hour|day|month entries, e.g. alice=5usd/day,*=1usd/day';

export function parseBudgets(value: string | undefined): Budgets {
  const byKey = new Map<string, BudgetLimit[]>();
  const fallback: BudgetLimit[] = [];
  if (value === undefined || value.trim() === '') return { byKey, fallback };
  for (const entry of value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = BUDGET_ENTRY.exec(entry);
    const amount = Number(m?.[2]);
    if (!m || !Number.isFinite(amount) || (m[3] === 'tokens' && !Number.isSafeInteger(amount))) {
      throw new ConfigError('BUDGETS', BUDGETS_ACCEPTED, value);
    }
    const limit: BudgetLimit = { amount, unit: m[3] as BudgetLimit['unit'], window: m[4] as BudgetWindow };
    const list = m[1] === '*' ? fallback : (byKey.get(m[1]) ?? []);
    if (list.some((l) => l.unit === limit.unit && l.window === limit.window)) {
      throw new ConfigError(
        'BUDGETS',
        `${BUDGETS_ACCEPTED}; ${m[1]} has two ${limit.unit}/${limit.window} limits`,
        value,
      );
    }
    list.push(limit);
    if (m[1] !== '*') byKey.set(m[1], list);
  }
  return { byKey, fallback };
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
