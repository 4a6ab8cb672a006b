import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { ValidateFunction } from 'ajv';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig, SessionMode, ToolPolicy } from '../config/app-config';
import { AgentTool } from './agent-tool.decorator';
import { checkAgainst, compileSchema, type SchemaCheck } from './json-schema';
import type { Tool } from './tool';
import { resolvePolicy } from './tool-policy';

/** What GET /v1/tools shows for one tool. */
export interface ToolListing {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  policy: ToolPolicy;
}

/** OpenAI's limit on function names; a tool the model cannot name is useless. */
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Every server tool, discovered at start-up from providers marked with @AgentTool(). */
@Injectable()
export class ToolRegistry implements OnModuleInit {
  private readonly tools = new Map<string, Tool>();
  private readonly validators = new WeakMap<Tool, ValidateFunction>();

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

  all(): Tool[] {
    return [...this.tools.values()];
  }

  get(name: string): Tool | undefined {
    return this.tools.get(name);
  }

  /** The tools this configuration offers at all (e.g. run_command only with ENABLE_RUN_COMMAND). */
  enabled(): Tool[] {
    return this.all().filter((tool) => tool.isEnabled?.(this.config) ?? true);
  }

  /** GET /v1/tools: the enabled tools with the policy they get in `mode`. */
  catalog(mode: SessionMode = 'safe'): ToolListing[] {
    return this.enabled().map((tool) => ({
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      policy: resolvePolicy(tool.kind, tool.name, mode, this.config.toolPolicy),
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
