import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { scrubSecrets } from '../config/secret-variables';
import { Metrics } from '../metrics/metrics.service';
import { validateJsonSchema } from '../tools/json-schema';
import type { Tool } from '../tools/tool';
import { ToolRegistry, type ToolSource } from '../tools/tool-registry.service';
import { McpConnection, type McpStatus } from './mcp-connection';
import { McpTool, UnavailableMcpTool } from './mcp-tool';
import { offeredToolName } from './mcp-tool-name';

/** GET /v1/mcp/servers: one server. */
export interface McpServerStatus {
  name: string;
  transport: 'stdio' | 'http';
  status: McpStatus;
  error?: string;
  tools: string[];
}

/**
 * The process's MCP servers as a source of tools: connects to each at start-up without holding
 * readiness back, and offers the tools of the connected ones beside the built-ins.
 */
@Injectable()
export class McpConnections implements ToolSource, OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Mcp');
  private readonly connections: McpConnection[];
  /** Offered name → tool, across servers, rebuilt whenever a server's state or list changes. */
  private offeredTools = new Map<string, McpTool>();
  private readonly offeredByServer = new Map<string, string[]>();

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly registry: ToolRegistry,
    private readonly metrics: Metrics,
  ) {
    this.connections = config.mcpServers.map(
      (server) =>
        new McpConnection(
          server,
          this.logger,
          () => this.rebuild(),
          (text) => scrubSecrets(text, config.secretValues),
        ),
    );
  }

  onModuleInit(): void {
    this.registry.addSource(this);
    for (const connection of this.connections) connection.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all(this.connections.map((c) => c.stop()));
  }

  offered(): Tool[] {
    return [...this.offeredTools.values()];
  }

  find(name: string): Tool | undefined {
    const tool = this.offeredTools.get(name);
    if (tool !== undefined) return tool;
    // Server names never prefix each other (refused at start-up), so at most one server matches.
    const owner = this.connections.find((c) => name.startsWith(`${c.config.name}__`));
    if (owner === undefined || owner.connected) return undefined;
    return new UnavailableMcpTool(name, owner);
  }

  statuses(): McpServerStatus[] {
    return this.connections.map((c) => ({
      name: c.config.name,
      transport: c.config.transport,
      status: c.status,
      ...(c.error === null ? {} : { error: c.error }),
      tools: c.connected ? (this.offeredByServer.get(c.config.name) ?? []) : [],
    }));
  }

  /** Names are unique: a tool whose offered name is taken (or whose schema cannot be used) is left out, with a warning. */
  private rebuild(): void {
    const next = new Map<string, McpTool>();
    this.offeredByServer.clear();
    for (const connection of this.connections) {
      const names: string[] = [];
      this.offeredByServer.set(connection.config.name, names);
      if (!connection.connected) continue;
      for (const listed of connection.listed) {
        const name = offeredToolName(connection.config.name, listed.name);
        const previous = this.offeredTools.get(name);
        const tool =
          previous?.isFor(connection, listed) === true
            ? previous
            : new McpTool(name, listed, connection, (server, code, ms) =>
                this.metrics.mcpCall(server, code, ms),
              );
        if (next.has(name) || this.registry.all().some((t) => t.name === name)) {
          this.logger.warn(
            `MCP tool ${listed.name} of ${connection.config.name} is not offered: the name ${name} is taken`,
          );
          continue;
        }
        if (previous !== tool && !this.usableSchema(tool, connection.config.name)) continue;
        next.set(name, tool);
        names.push(name);
      }
    }
    this.offeredTools = next;
  }

  /** MCP schemas come from outside: they pass the same check (and its protections) as a client tool's schema. */
  private usableSchema(tool: McpTool, server: string): boolean {
    const check = validateJsonSchema(tool.parameters);
    if (!check.ok) {
      this.logger.warn(
        `MCP tool ${tool.name} of ${server} is not offered: its input schema cannot be used (${check.message})`,
      );
    }
    return check.ok;
  }
}
