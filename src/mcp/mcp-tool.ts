import type { Tool as McpListedTool } from '@modelcontextprotocol/sdk/types.js';
import type { AppConfig } from '../config/app-config';
import {
  ToolError,
  type Tool,
  type ToolContext,
  type ToolErrorCode,
  type ToolKind,
  type ToolResult,
} from '../tools/tool';
import type { McpConnection } from './mcp-connection';
import { mapMcpResult } from './mcp-result';

/** Counts one MCP call for the metrics: its server and its error code (null when it succeeded). */
export type McpCallRecorder = (server: string, errorCode: ToolErrorCode | null, durationMs: number) => void;

/** One tool of an MCP server, offered as `<server>__<tool>`; calls go through the server's current connection. */
export class McpTool implements Tool {
  readonly description: string;
  readonly parameters: Record<string, unknown>;
  readonly kind: ToolKind;
  readonly source: `mcp:${string}`;

  constructor(
    readonly name: string,
    private readonly listed: McpListedTool,
    private readonly connection: McpConnection,
    private readonly record: McpCallRecorder,
  ) {
    this.description =
      listed.description ?? listed.title ?? `${listed.name} (MCP server ${connection.config.name})`;
    this.parameters = listed.inputSchema;
    // Only a server's explicit promise makes a tool a read; anything else may change the world.
    this.kind = listed.annotations?.readOnlyHint === true ? 'read' : 'write';
    this.source = `mcp:${connection.config.name}`;
  }

  /** Whether this object still stands for that listing on that connection (a refresh makes new ones). */
  isFor(connection: McpConnection, listed: McpListedTool): boolean {
    return this.connection === connection && this.listed === listed;
  }

  timeoutMs(_args: Record<string, unknown>, _config: AppConfig): number {
    return this.connection.config.timeoutMs;
  }

  async describeForApproval(args: Record<string, unknown>): Promise<string> {
    const hints = this.listed.annotations?.destructiveHint === false ? '' : ' (it may change or delete data)';
    return `Call ${this.listed.name} on the MCP server ${this.connection.config.name}${hints} with ${JSON.stringify(args)}`;
  }

  async execute(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
    const started = performance.now();
    let code: ToolErrorCode | null = null;
    try {
      const result = mapMcpResult(
        await this.connection.callTool(this.listed.name, args, {
          signal: ctx.signal,
          onProgress: (p) =>
            ctx.emitOutput(
              'stdout',
              p.message ??
                (p.total === undefined ? `progress ${p.progress}` : `progress ${p.progress}/${p.total}`),
            ),
        }),
      );
      code = result.errorCode ?? null;
      return result;
    } catch (err) {
      const reason: unknown = ctx.signal.reason;
      if (ctx.signal.aborted) code = reason instanceof ToolError ? reason.code : 'CANCELLED';
      else code = err instanceof ToolError ? err.code : 'EXECUTION_ERROR';
      throw err;
    } finally {
      this.record(this.connection.config.name, code, performance.now() - started);
    }
  }
}

/**
 * What a name of a server that is not connected resolves to: any call to it gets MCP_UNAVAILABLE and
 * never reaches the server, even if it comes back before the call runs (it was never approved as that tool).
 */
export class UnavailableMcpTool implements Tool {
  readonly description = 'A tool of an MCP server that is not connected.';
  readonly parameters = { type: 'object' };
  readonly kind: ToolKind = 'read';
  readonly source: `mcp:${string}`;

  constructor(
    readonly name: string,
    private readonly connection: McpConnection,
  ) {
    this.source = `mcp:${connection.config.name}`;
  }

  async execute(): Promise<ToolResult> {
    const why = this.connection.error === null ? '' : ` (${this.connection.error})`;
    throw new ToolError(
      'MCP_UNAVAILABLE',
      `The MCP server ${this.connection.config.name} is not available right now${why}; ${this.name} cannot run. Try again later or do without it.`,
    );
  }
}
