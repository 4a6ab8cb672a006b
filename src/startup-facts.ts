import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { AppConfig } from './config/app-config';
import { shownUrl } from './config/secret-variables';
import type { BudgetLimit } from './config/team-config';
import { splitModelName } from './llm/model-name';
import { ModelProviders } from './llm/model-providers.service';
import { PROVIDERS, upstreamToCheck } from './llm/providers';
import { OPENAI_BASE_URL } from './llm/providers/openai/openai.provider';
import type { UpstreamToCheck } from './llm/upstream-check';
import { McpConnections } from './mcp/mcp-connections.service';
import { databaseLocation, type BannerFacts } from './observability/startup-banner';
import { CommandSandbox } from './tools/exec/command-sandbox.service';
import { ToolRegistry } from './tools/tool-registry.service';

/** What the start-up banner says, read from the configuration and the running application. */
export function startupFacts(app: NestFastifyApplication, config: AppConfig, url: string): BannerFacts {
  const openai = config.llm.endpoints.OPENAI;
  const baseUrl = shownUrl(openai.baseUrl ?? OPENAI_BASE_URL);
  const defaultProvider = splitModelName(config.llm.model).provider;
  const configured = app.get(ModelProviders, { strict: false }).list();
  const sandbox = app.get(CommandSandbox, { strict: false });
  const off: string[] = [];
  if (openai.apiKey === null) {
    off.push(
      openai.baseUrl === null
        ? `OPENAI_API_KEY is not set: every model call to ${baseUrl} will fail. Set it in .env (or point OPENAI_BASE_URL at a local server such as Ollama).`
        : `OPENAI_API_KEY is not set: fine for a server that needs no key (${baseUrl}); any other refuses every model call.`,
    );
  }
  if (!config.enableRunCommand) {
    off.push('run_command (shell commands) is off: ENABLE_RUN_COMMAND=true turns it on.');
  } else if (sandbox.unusableReason !== null) {
    off.push(
      `run_command is not offered: no sandbox can be made here (${sandbox.unusableReason}). Install bubblewrap, or set RUN_COMMAND_SANDBOX=off (unsafe).`,
    );
  } else if (!sandbox.sandboxed) {
    off.push('run_command runs commands WITHOUT a sandbox (RUN_COMMAND_SANDBOX=off).');
  }
  return {
    url,
    model: {
      name: config.llm.model,
      provider: defaultProvider,
      baseUrl: configured.find((p) => p.name === defaultProvider)?.baseUrl ?? baseUrl,
    },
    providers: configured,
    fallbacks: config.llm.fallbackModels,
    budgets: [
      ...[...config.budgets.byKey].map(([key, limits]) => `${key}: ${limits.map(limitText).join(', ')}`),
      ...(config.budgets.fallback.length === 0
        ? []
        : [`* (every other key): ${config.budgets.fallback.map(limitText).join(', ')}`]),
      ...[...config.budgets.byEndUser].map(
        ([name, limits]) => `${name}: ${limits.map(limitText).join(', ')}`,
      ),
      ...[...config.budgets.endUserFallback].map(
        ([key, limits]) => `${key}/* (each end user): ${limits.map(limitText).join(', ')}`,
      ),
    ],
    adminKeys: [...config.adminKeys],
    traces:
      config.tracing === null
        ? null
        : {
            endpoint: shownUrl(config.tracing.tracesUrl),
            protocol: config.tracing.protocol,
            captureContent: config.tracing.captureContent,
          },
    database:
      config.databaseUrl === null
        ? { kind: 'embedded', dataDir: config.dataDir }
        : { kind: 'external', location: databaseLocation(config.databaseUrl) },
    workspace: { root: config.workspaceRoot, scope: config.workspaceScope },
    keys: config.apiKeys === null ? null : [...new Set(config.apiKeys.values())],
    tools: app
      .get(ToolRegistry)
      .catalog('safe')
      .map((t) => ({ name: t.name, policy: t.policy })),
    mcp: app
      .get(McpConnections, { strict: false })
      .statuses()
      .map((s) => ({ name: s.name, status: s.status })),
    off,
  };
}

function limitText(limit: BudgetLimit): string {
  return `${limit.amount} ${limit.unit === 'usd' ? 'USD' : 'tokens'}/${limit.window}`;
}

/**
 * The model upstreams start-up asks whether they answer and take their key: each configured
 * provider's (ProviderDefinition.upstreamCheck), once per base URL and key (`openai` and
 * `openai-responses` share theirs).
 */
export function upstreamsToCheck(config: AppConfig): UpstreamToCheck[] {
  const seen = new Set<string>();
  return PROVIDERS.flatMap((p) => {
    const check = upstreamToCheck(p, config);
    if (check === null) return [];
    const key = `${p.endpoint.name} ${check.baseUrl}`;
    if (seen.has(key)) return [];
    seen.add(key);
    return [check];
  });
}
