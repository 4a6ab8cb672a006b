/**
 * How a variable carries a secret, which says what of its value is secret:
 * - `key`: all of it (an API key);
 * - `pairs`: the value of each `name:secret` or `name=value` pair (API_KEYS, the OTLP headers);
 * - `json`: the string values of a JSON object (LLM_HEADERS);
 * - `url`: a URL's credentials (the userinfo `user:pass@`, secret-looking query values such as `?key=…`);
 * - `names`: who may do what (ADMIN_KEYS): no credential, but kept from commands and refusals all the same.
 */
export type SecretKind = 'key' | 'pairs' | 'json' | 'url' | 'names';

/**
 * Every variable of the configuration that carries a secret: the one place that says so. Read by
 * every refusal message (ConfigError shows such a value redacted), by `run_command`'s environment
 * (never passed on, even when RUN_COMMAND_ENV names it), by MCP_CONFIG's substitutions (never
 * interpolated), by the scrubbing of what an upstream's error quotes (secretValuesOf) and by the
 * model providers' definitions (a provider's secret variables are typed as names of this table, so
 * a new provider's key is declared here or does not compile).
 */
export const SECRET_VARIABLES = {
  API_KEYS: 'pairs',
  ADMIN_KEYS: 'names',
  OPENAI_API_KEY: 'key',
  ANTHROPIC_API_KEY: 'key',
  AZURE_OPENAI_API_KEY: 'key',
  LLM_HEADERS: 'json',
  OTEL_EXPORTER_OTLP_HEADERS: 'pairs',
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'pairs',
  DATABASE_URL: 'url',
  OPENAI_BASE_URL: 'url',
  ANTHROPIC_BASE_URL: 'url',
  AZURE_OPENAI_BASE_URL: 'url',
  OTEL_EXPORTER_OTLP_ENDPOINT: 'url',
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'url',
} as const satisfies Record<string, SecretKind>;

export type SecretVariable = keyof typeof SECRET_VARIABLES;

export function isSecretVariable(name: string): name is SecretVariable {
  return Object.hasOwn(SECRET_VARIABLES, name);
}

/**
 * A model API's endpoint, named by the prefix of its two variables `<NAME>_API_KEY` (a key) and
 * `<NAME>_BASE_URL` (a URL) in the table above: declaring both there is all config/ needs to read a
 * new provider's settings (AppConfig.llm.endpoints).
 */
export type EndpointName = {
  [V in SecretVariable]: V extends `${infer P}_API_KEY`
    ? `${P}_BASE_URL` extends SecretVariable
      ? P
      : never
    : never;
}[SecretVariable];

/** Every endpoint the table declares, by its prefix. */
export const ENDPOINT_NAMES: readonly EndpointName[] = Object.keys(SECRET_VARIABLES).flatMap(
  (v): EndpointName[] => {
    const prefix = /^(.+)_API_KEY$/.exec(v)?.[1];
    return prefix !== undefined && isSecretVariable(`${prefix}_BASE_URL`) ? [prefix as EndpointName] : [];
  },
);

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

/** Shorter values are not looked for in text: replacing them would garble words, not hide a secret. */
const MIN_SECRET_LENGTH = 6;

/**
 * The secret values the environment holds, as SECRET_VARIABLES says where they are in each variable,
 * and the whole values of `alsoSecret` (MCP_CONFIG's substitutions): what scrubSecrets takes out of
 * text the server did not write (an upstream's error that quotes the request it refused).
 */
export function secretValuesOf(
  env: Readonly<Record<string, string | undefined>>,
  alsoSecret: Iterable<string> = [],
): string[] {
  const values = new Set<string>();
  const kinds: [string, SecretKind][] = [
    ...Object.entries(SECRET_VARIABLES),
    ...[...alsoSecret].map((name): [string, SecretKind] => [name, 'key']),
  ];
  for (const [name, kind] of kinds) {
    const value = env[name]?.trim();
    if (value) for (const secret of secretsIn(kind, value)) values.add(secret);
  }
  // Longest first, as scrubSecrets takes them: no part of one survives another's replacement.
  return [...values].filter((v) => v.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
}

function secretsIn(kind: SecretKind, value: string): string[] {
  switch (kind) {
    case 'key':
      return [value];
    case 'names':
      return [];
    case 'pairs':
      return value.split(',').flatMap((pair) => {
        const at = pair.search(/[:=]/);
        return at < 0 ? [] : withDecoded(pair.slice(at + 1).trim());
      });
    case 'json':
      try {
        const parsed: unknown = JSON.parse(value);
        return typeof parsed === 'object' && parsed !== null
          ? Object.values(parsed).filter((v): v is string => typeof v === 'string')
          : [];
      } catch {
        return [value];
      }
    case 'url': {
      const secrets: string[] = [];
      const userinfo = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)@/i.exec(value)?.[1];
      const colon = userinfo?.indexOf(':') ?? -1;
      if (userinfo !== undefined && colon >= 0) secrets.push(...withDecoded(userinfo.slice(colon + 1)));
      for (const m of value.matchAll(SECRET_QUERY)) secrets.push(...withDecoded(m[0].slice(m[1].length)));
      return secrets;
    }
  }
}

function withDecoded(value: string): string[] {
  try {
    return [value, decodeURIComponent(value)];
  } catch {
    return [value];
  }
}

/** `text` with every one of `secrets` (longest first, as secretValuesOf gives them) replaced. */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (out.includes(secret)) out = out.replaceAll(secret, REDACTED);
  }
  return out;
}
