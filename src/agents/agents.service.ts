import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type { AgentConfig } from '../config/agents-config';
import { ConfigError, type AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { fullModelName } from '../llm/model-name';
import { DELEGATE_TOOL } from '../tools/builtin/delegate.tool';
import { ToolRegistry } from '../tools/tool-registry.service';
import { Toolset } from '../tools/toolset';
import type { AgentResponse } from './dto/agent.response';

/** AGENTS_CONFIG's agents as the API shows them; their tools checked against this server at start-up. */
@Injectable()
export class Agents implements OnModuleInit {
  constructor(
    private readonly registry: ToolRegistry,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** A tool name no tool of this server can ever have is a typo that would silently leave the agent without it. */
  onModuleInit(): void {
    refuseUnknownAgentTools(this.config.agents, (name) => this.isToolName(name));
  }

  list(): AgentResponse[] {
    return this.config.agents.map((agent) => {
      const mode = agent.mode ?? 'safe';
      const toolset = new Toolset(this.registry, this.config, {
        mode,
        tools: agent.tools === null ? null : [...agent.tools],
        clientTools: [],
      });
      return {
        name: agent.name,
        description: agent.description,
        model: fullModelName(agent.model ?? this.config.llm.model),
        mode,
        // Named tools stay listed when they are not offered right now (an MCP server that is down).
        tools: agent.tools === null ? toolset.serverToolNames : [...agent.tools],
      };
    });
  }

  /** A built-in, `delegate`, or a name an MCP server of MCP_CONFIG may offer (`<server>__…`). */
  private isToolName(name: string): boolean {
    if (name === DELEGATE_TOOL || this.registry.get(name) !== undefined) return true;
    return this.config.mcpServers.some((server) => name.startsWith(`${server.name}__`));
  }
}

/** Stops start-up at the first agent naming a tool that `isToolName` refuses, naming the agent and the field. */
export function refuseUnknownAgentTools(
  agents: readonly AgentConfig[],
  isToolName: (name: string) => boolean,
): void {
  for (const agent of agents) {
    const unknown = agent.tools?.find((name) => !isToolName(name));
    if (unknown !== undefined) {
      throw new ConfigError(
        'AGENTS_CONFIG',
        `agents whose tools are tools of this server (agent ${JSON.stringify(agent.name)}: tools names ${JSON.stringify(unknown)}, which is none; see GET /v1/tools)`,
        unknown,
      );
    }
  }
}
