import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { ValidateFunction } from 'ajv';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig, SessionMode, ToolPolicy } from '../config/app-config';
import { AgentTool } from './agent-tool.decorator';
import { checkAgainst, compileSchema, type SchemaCheck } from './json-schema';
import type { Tool } from './tool';
import { policyOf } from './tool-policy';

/** What GET /v1/tools shows for one tool. */
export interface ToolListing {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  policy: ToolPolicy;
  /** `builtin`, or `mcp:<server>` for a tool of an MCP server. */
  source: string;
}

/**
 * Tools that come and go at run time (MCP servers): what is offered now, and what a name means now —
 * also a name that is not offered at the moment (its server is down) so a call gets a useful error.
 */
export interface ToolSource {
  offered(): Tool[];
  find(name: string): Tool | undefined;
}

/** OpenAI's limit on function names; a tool the model cannot name is useless. */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Every server tool, discovered at start-up from providers marked with @AgentTool(). */
@Injectable()
export class ToolRegistry implements OnModuleInit {
  private readonly tools = new Map<string, Tool>();
  private readonly validators = new WeakMap<Tool, ValidateFunction>();
  private readonly sources: ToolSource[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    for (const wrapper of this.discovery.getProviders({ metadataKey: AgentTool.KEY })) {
      const instance: unknown = wrapper.instance;
      if (!isTool(instance)) {
        throw new Error(
          `${wrapper.name} is marked @AgentTool() but is not a Tool (name, description, parameters, kind, execute).`,
        );
      }
      this.register(instance);
    }
  }

  /** Adds a tool; start-up fails on a duplicate name or a schema ajv cannot compile. */
  register(tool: Tool): void {
    if (!TOOL_NAME.test(tool.name)) {
      throw new Error(`Tool name ${JSON.stringify(tool.name)} must match ${String(TOOL_NAME)}.`);
    }
    if (this.tools.has(tool.name)) {
      throw new Error(`Two tools are named ${tool.name}; tool names must be unique.`);
    }
    this.validators.set(tool, compileSchema(tool.parameters));
    this.tools.set(tool.name, tool);
  }

  /** Adds a source of tools that change at run time; a built-in keeps its name against any of them. */
  addSource(source: ToolSource): void {
    this.sources.push(source);
  }

  all(): Tool[] {
    return [...this.tools.values()];
  }

  get(name: string): Tool | undefined {
    const builtin = this.tools.get(name);
    if (builtin !== undefined) return builtin;
    for (const source of this.sources) {
      const tool = source.find(name);
      if (tool !== undefined) return tool;
    }
    return undefined;
  }

  /** The tools offered right now: the built-ins this configuration enables (e.g. run_command only with ENABLE_RUN_COMMAND) and the sources' current tools. */
  enabled(): Tool[] {
    const builtins = this.all().filter((tool) => tool.isEnabled?.(this.config) ?? true);
    const fromSources = this.sources
      .flatMap((source) => source.offered())
      .filter((t) => !this.tools.has(t.name));
    return [...builtins, ...fromSources];
  }

  /** Whether `name` is a tool offered right now or a built-in (a client tool may take neither). */
  isServerToolName(name: string): boolean {
    return this.tools.has(name) || this.enabled().some((tool) => tool.name === name);
  }

  /**
   * A bounded metrics label for a call's tool: a registered or offered name as it is, `client` for a
   * session's client tool, `unknown` for a name the model invented — labels on the public /metrics
   * come from a closed set.
   */
  metricName(name: string, executor: 'server' | 'client'): string {
    if (executor === 'client') return 'client';
    return this.isServerToolName(name) ? name : 'unknown';
  }

  /** GET /v1/tools: the enabled tools with the policy they get in `mode`. */
  catalog(mode: SessionMode = 'safe'): ToolListing[] {
    return this.enabled().map((tool) => ({
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      policy: policyOf(tool, mode, this.config.toolPolicy),
      source: tool.source ?? 'builtin',
    }));
  }

  /** Checks a call's arguments against the tool's schema (compiled once per tool). */
  validateArguments(name: string, args: unknown): SchemaCheck {
    const tool = this.tools.get(name);
    if (tool === undefined) return { ok: false, message: `There is no tool named ${name}.` };
    return this.validate(tool, args);
  }

  /** Like validateArguments, for a tool object (also one that was never registered, e.g. in tests). */
  validate(tool: Tool, args: unknown): SchemaCheck {
    let validator = this.validators.get(tool);
    if (validator === undefined) {
      validator = compileSchema(tool.parameters);
      this.validators.set(tool, validator);
    }
    return checkAgainst(validator, args);
  }
}

function isTool(value: unknown): value is Tool {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<Record<keyof Tool, unknown>>;
  return (
    typeof candidate.name === 'string' &&
    typeof candidate.description === 'string' &&
    typeof candidate.parameters === 'object' &&
    candidate.parameters !== null &&
    (candidate.kind === 'read' || candidate.kind === 'write' || candidate.kind === 'exec') &&
    typeof candidate.execute === 'function'
  );
}
