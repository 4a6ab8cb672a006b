import type { ValidateFunction } from 'ajv';
import type { AppConfig, SessionMode, ToolPolicy } from '../config/app-config';
import type { ClientToolDefinition } from '../persistence/entities/session.entity';
import { compileSchema } from './json-schema';
import type { Tool, ToolDefinition } from './tool';
import { policyOf } from './tool-policy';
import { DELEGATE_TOOL } from './builtin/delegate.tool';
import type { ToolRegistry } from './tool-registry.service';

export type ToolLookup =
  | { kind: 'server'; tool: Tool; policy: Exclude<ToolPolicy, 'deny'> }
  | { kind: 'client'; definition: ClientToolDefinition; validate: ValidateFunction }
  | { kind: 'refused'; reason: string }
  | { kind: 'unknown'; reason: string };

const EMPTY_OBJECT_SCHEMA = { type: 'object', properties: {} };

/** The tools one session offers the model: its server tools the mode does not refuse, and its client tools. */
export class Toolset {
  readonly definitions: ToolDefinition[];
  private readonly server = new Map<string, { tool: Tool; policy: Exclude<ToolPolicy, 'deny'> }>();
  private readonly refused = new Map<string, string>();
  private readonly client = new Map<
    string,
    { definition: ClientToolDefinition; validate: ValidateFunction }
  >();

  private readonly allowed: ReadonlySet<string> | null;

  constructor(
    private readonly registry: ToolRegistry,
    private readonly config: AppConfig,
    private readonly session: {
      mode: SessionMode;
      tools: string[] | null;
      clientTools: ClientToolDefinition[];
      /** Levels of delegation below the client's run: at AGENT_MAX_DEPTH, `delegate` is not offered. */
      depth?: number;
    },
  ) {
    const allowed = session.tools === null ? null : new Set(session.tools);
    this.allowed = allowed;
    // A tool offered after the session was created (an MCP server came up) never hides the session's own client tool.
    const clientNames = new Set(session.clientTools.map((d) => d.function.name));
    for (const tool of registry.enabled()) {
      if (allowed && !allowed.has(tool.offeredWith?.name ?? tool.name)) continue;
      if (clientNames.has(tool.name)) continue;
      if (tool.name === DELEGATE_TOOL && (session.depth ?? 0) >= config.agentMaxDepth) continue;
      const policy = policyOf(tool, session.mode, config.toolPolicy);
      if (policy === 'deny') {
        this.refused.set(tool.name, `${tool.name} is not allowed in ${session.mode} mode on this server.`);
      } else {
        this.server.set(tool.name, { tool, policy });
      }
    }
    for (const definition of session.clientTools) {
      const parameters = definition.function.parameters ?? EMPTY_OBJECT_SCHEMA;
      this.client.set(definition.function.name, { definition, validate: compileSchema(parameters) });
    }
    this.definitions = [
      ...[...this.server.values()].map(({ tool }) => ({
        name: tool.name,
        description: tool.description,
        parameters: tool.parameters,
      })),
      ...session.clientTools.map((d) => ({
        name: d.function.name,
        description: d.function.description ?? '',
        parameters: d.function.parameters ?? EMPTY_OBJECT_SCHEMA,
      })),
    ];
  }

  get serverToolNames(): string[] {
    return [...this.server.keys()];
  }

  lookup(name: string): ToolLookup {
    const server = this.server.get(name);
    if (server) return { kind: 'server', ...server };
    const client = this.client.get(name);
    if (client) return { kind: 'client', ...client };
    const refused = this.refused.get(name);
    if (refused) return { kind: 'refused', reason: refused };
    const late = this.notOffered(name);
    if (late) return late;
    const available = this.definitions.map((d) => d.name).join(', ') || 'none';
    return {
      kind: 'unknown',
      reason: `There is no tool named ${name} in this session. Available tools: ${available}.`,
    };
  }

  /**
   * A tool the registry knows by name but did not offer when this toolset was made: an MCP tool whose
   * server is down (its call then gets MCP_UNAVAILABLE) or came up since. The same policies apply.
   */
  private notOffered(name: string): ToolLookup | undefined {
    if (this.allowed && !this.allowed.has(name)) return undefined;
    const tool = this.registry.get(name);
    if (tool?.source === undefined) return undefined;
    const policy = policyOf(tool, this.session.mode, this.config.toolPolicy);
    if (policy === 'deny') {
      return {
        kind: 'refused',
        reason: `${name} is not allowed in ${this.session.mode} mode on this server.`,
      };
    }
    return { kind: 'server', tool, policy };
  }
}
