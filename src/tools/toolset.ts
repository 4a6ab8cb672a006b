import type { ValidateFunction } from 'ajv';
import type { AppConfig, SessionMode, ToolPolicy } from '../config/app-config';
import type { ClientToolDefinition } from '../persistence/entities/session.entity';
import { compileSchema } from './json-schema';
import type { Tool, ToolDefinition } from './tool';
import { resolvePolicy } from './tool-policy';
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

  constructor(
    registry: ToolRegistry,
    config: AppConfig,
    session: { mode: SessionMode; tools: string[] | null; clientTools: ClientToolDefinition[] },
  ) {
    const allowed = session.tools === null ? null : new Set(session.tools);
    for (const tool of registry.enabled()) {
      if (allowed && !allowed.has(tool.name)) continue;
      const policy = resolvePolicy(tool.kind, tool.name, session.mode, config.toolPolicy);
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
    const available = this.definitions.map((d) => d.name).join(', ') || 'none';
    return {
      kind: 'unknown',
      reason: `There is no tool named ${name} in this session. Available tools: ${available}.`,
    };
  }
}
