/**
 * What start-up tells a person (or a log collector) once the server listens: where things are,
 * what it talks to, and what is off and why. Built from plain facts main.ts gathers, so this file
 * knows no module of the application.
 */
export interface BannerFacts {
  /** The base URL the server answers on, e.g. http://127.0.0.1:3000. */
  url: string;
  model: { name: string; provider: string; baseUrl: string };
  /** Every configured model provider, base URLs without credentials. */
  providers: readonly { name: string; baseUrl: string }[];
  /** LLM_FALLBACK_MODELS, in order. */
  fallbacks: readonly string[];
  /** BUDGETS, one entry per key (`*` for every key without its own), e.g. `alice: 5 USD/day`. */
  budgets: readonly string[];
  /** ADMIN_KEYS: the key names that read every key's usage. */
  adminKeys: readonly string[];
  /** Where traces go (without credentials), or null when no OTLP endpoint is set. */
  traces: { endpoint: string; protocol: string; captureContent: boolean } | null;
  database: { kind: 'embedded'; dataDir: string } | { kind: 'external'; location: string };
  workspace: { root: string; scope: 'shared' | 'key' | 'session' };
  /** Key names when API_KEYS is set; null when auth is off. */
  keys: readonly string[] | null;
  tools: readonly { name: string; policy: 'allow' | 'confirm' | 'deny' }[];
  mcp: readonly { name: string; status: string }[];
  /** What is off or will fail, each with its reason and what to do. */
  off: readonly string[];
}

const SCOPES = {
  shared: 'one folder for every key',
  key: 'a folder per key',
  session: 'a folder per session',
} as const;

/** The banner as JSON fields (one log line). */
export function bannerRecord(f: BannerFacts): Record<string, unknown> {
  return {
    urls: { api: `${f.url}/v1`, playground: `${f.url}/`, docs: `${f.url}/docs` },
    model: f.model,
    providers: f.providers,
    fallbacks: f.fallbacks,
    budgets: f.budgets,
    adminKeys: f.adminKeys,
    traces: f.traces ?? 'off',
    database: f.database,
    workspace: f.workspace,
    auth: f.keys === null ? 'off (loopback only)' : { keys: f.keys },
    tools: f.tools,
    mcp: f.mcp,
    off: f.off,
  };
}

/** The banner as text for a terminal. */
export function bannerText(f: BannerFacts): string {
  const byPolicy = (p: 'allow' | 'confirm' | 'deny') =>
    f.tools.filter((t) => t.policy === p).map((t) => t.name);
  const rows: [string, string][] = [
    ['Playground', `${f.url}/`],
    ['API', `${f.url}/v1`],
    ['API docs', `${f.url}/docs`],
    ['Model', `${f.model.name} (provider ${f.model.provider}, ${f.model.baseUrl})`],
    ['Providers', f.providers.map((p) => `${p.name} (${p.baseUrl})`).join(', ')],
    ['Fallbacks', f.fallbacks.join(', ') || 'none (LLM_FALLBACK_MODELS unset)'],
    [
      'Database',
      f.database.kind === 'embedded'
        ? `embedded PostgreSQL, data in ${f.database.dataDir}`
        : `PostgreSQL at ${f.database.location}`,
    ],
    ['Workspace', `${f.workspace.root} (WORKSPACE_SCOPE=${f.workspace.scope}: ${SCOPES[f.workspace.scope]})`],
    ['Auth', f.keys === null ? 'off: no API_KEYS, loopback only' : `API keys: ${f.keys.join(', ')}`],
    ['Admin keys', f.adminKeys.join(', ') || 'none (ADMIN_KEYS unset): each key reads its own usage'],
    ['Budgets', f.budgets.join('; ') || 'none (BUDGETS unset): no key is limited'],
    [
      'Traces',
      f.traces === null
        ? 'off (OTEL_EXPORTER_OTLP_ENDPOINT unset)'
        : `${f.traces.endpoint} (${f.traces.protocol}${f.traces.captureContent ? ', prompts and answers recorded' : ''})`,
    ],
    ['Tools run', byPolicy('allow').join(', ') || 'none'],
    ['Tools ask', `${byPolicy('confirm').join(', ') || 'none'} (approval in the default mode, safe)`],
    [
      'MCP servers',
      f.mcp.length === 0 ? 'none (MCP_CONFIG unset)' : f.mcp.map((s) => `${s.name} (${s.status})`).join(', '),
    ],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  const lines = ['', 'Loopwright is ready', ...rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`)];
  if (f.off.length > 0) lines.push('', 'Off, and why:', ...f.off.map((o) => `  - ${o}`));
  lines.push('', 'Open the playground, paste an API key if asked, and send a message.', '');
  return lines.join('\n');
}

/** A database URL without its password: what the banner may show. */
export function databaseLocation(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}${u.port ? `:${u.port}` : ''}${u.pathname}${u.username ? ` as ${decodeURIComponent(u.username)}` : ''}`;
  } catch {
    return 'DATABASE_URL';
  }
}
