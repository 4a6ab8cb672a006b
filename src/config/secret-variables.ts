/**
 * How a variable carries a secret: its whole value (a key, a header list), or — a URL — its
 * credentials (the userinfo `user:pass@`, secret-looking query values such as `?key=…`).
 */
export type SecretKind = 'value' | 'url';

/**
 * Every variable of the configuration that carries a secret: the one place that says so. Read by
 * every refusal message (ConfigError shows such a value redacted), by `run_command`'s environment
 * (never passed on, even when RUN_COMMAND_ENV names it), by MCP_CONFIG's substitutions (never
 * interpolated) and by the model providers' definitions (a provider's secret variables are typed
 * as names of this table, so a new provider's key is declared here or does not compile).
 */
export const SECRET_VARIABLES = {
  API_KEYS: 'value',
  ADMIN_KEYS: 'value',
  OPENAI_API_KEY: 'value',
  ANTHROPIC_API_KEY: 'value',
  LLM_HEADERS: 'value',
  OTEL_EXPORTER_OTLP_HEADERS: 'value',
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'value',
  DATABASE_URL: 'url',
  OPENAI_BASE_URL: 'url',
  ANTHROPIC_BASE_URL: 'url',
  OTEL_EXPORTER_OTLP_ENDPOINT: 'url',
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'url',
} as const satisfies Record<string, SecretKind>;

export type SecretVariable = keyof typeof SECRET_VARIABLES;

export function isSecretVariable(name: string): name is SecretVariable {
  return Object.hasOwn(SECRET_VARIABLES, name);
}

const REDACTED = '<redacted>';
const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;
// Up to the last `@` before the path: a password may hold an `@` of its own.
const USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i;
const SECRET_QUERY = /([?&][^=&#]*(?:key|token|secret|passw|pwd|auth|sig|credential)[^=&#]*=)[^&#]*/gi;

/**
 * A URL as it may be shown (banner, warnings, `GET /v1/models`, refusals): without its userinfo and
 * with the value of every secret-looking query parameter replaced. The rest stays as written; the
 * URL itself is still used as given.
 */
export function shownUrl(url: string): string {
  return url.replace(USERINFO, '$1').replace(SECRET_QUERY, `$1${REDACTED}`);
}

/** A variable's value as a refusal message may quote it: a secret's redacted, anything else as given. */
export function shownValue(variable: string, value: string): string {
  if (!isSecretVariable(variable)) return value;
  if (SECRET_VARIABLES[variable] === 'url' && SCHEME.test(value)) return shownUrl(value);
  return REDACTED;
}

const URL_IN_TEXT = /[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi;

/** A message that may quote URLs (an error of fetch, of a driver) with each URL as shownUrl shows it. */
export function shownText(text: string): string {
  return text.replace(URL_IN_TEXT, (url) => shownUrl(url));
}
