import type { Logger } from '@nestjs/common';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  McpError,
  ToolListChangedNotificationSchema,
  type Progress,
  type Tool as McpListedTool,
} from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig } from '../config/mcp-config';
import { ToolError } from '../tools/tool';
import { CoalescedTask } from './coalesced-task';
import { lazyOutputValidator } from './lazy-output-validator';
import type { McpCallResult } from './mcp-result';

export type McpStatus = 'connecting' | 'connected' | 'failed';

/** Backoff between attempts: 1 s, 2 s, 4 s … at most 30 s (the contract wants a first retry within 15 s). */
const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 30_000;
/** How much of a stdio server's stderr is kept to explain a failure. */
const STDERR_TAIL_CHARS = 2000;
/**
 * The most pages and tools one listing may take. Real servers list tens of tools, a large one a few
 * hundred, mostly on one page; a server past these (one that hands out a new `nextCursor` forever)
 * is failed, not followed — following it would hold every page in memory and never connect.
 */
export const MCP_MAX_LIST_PAGES = 100;
export const MCP_MAX_TOOLS = 1000;

/** A tool list past MCP_MAX_LIST_PAGES or MCP_MAX_TOOLS: the server is failed (and retried like any failure). */
export class McpToolListTooLong extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'McpToolListTooLong';
  }
}

export interface McpCallOptions {
  signal: AbortSignal;
  onProgress(progress: Progress): void;
}

/**
 * One configured MCP server, owned by this process: connects, reconnects with backoff, keeps the
 * server's current tool list, and carries calls. Nothing of it is stored: another replica has its own.
 */
export class McpConnection {
  status: McpStatus = 'connecting';
  error: string | null = null;
  /** The tools the server listed at its last refresh (after the `tools` allow-list and the task filter). */
  listed: McpListedTool[] = [];
  private client: Client | null = null;
  /** The client of an attempt under way: shutdown ends it too (a child that hangs in initialize must not outlive us). */
  private attempt: Client | null = null;
  private retries = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  private stderrTail = '';

  constructor(
    readonly config: McpServerConfig,
    private readonly logger: Logger,
    /** Called whenever what this server offers changes (connected, dropped, list refreshed). */
    private readonly onChange: () => void,
    /**
     * Takes the server's configured secrets out of what it says (an error that quotes its headers or
     * its environment) before `GET /v1/mcp/servers` or a tool result shows it.
     */
    private readonly scrub: (text: string) => string = (text) => text,
  ) {}

  get connected(): boolean {
    return this.status === 'connected' && this.client !== null;
  }

  start(): void {
    void this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    const clients = new Set([this.client, this.attempt].filter((c): c is Client => c !== null));
    this.client = null;
    // Closing the stdio transport ends the child: stdin closed, then SIGTERM, then SIGKILL.
    await Promise.all([...clients].map((c) => c.close().catch(() => undefined)));
  }

  async callTool(
    name: string,
    args: Record<string, unknown>,
    options: McpCallOptions,
  ): Promise<McpCallResult> {
    const client = this.client;
    if (client === null || !this.connected) throw this.unavailable();
    try {
      return (await client.callTool({ name, arguments: args }, undefined, {
        // The SDK sends notifications/cancelled when this signal aborts (run cancelled or the tool timed out).
        signal: options.signal,
        onprogress: (progress) => options.onProgress(progress),
        // The runner's timeout (the server's timeoutMs) decides; this only keeps the SDK's 60 s default away.
        timeout: this.config.timeoutMs + 5000,
        resetTimeoutOnProgress: false,
      })) as McpCallResult;
    } catch (err) {
      if (options.signal.aborted) throw err;
      if (err instanceof McpError && err.code === Number(ErrorCode.ConnectionClosed))
        throw this.unavailable();
      if (!(err instanceof McpError)) {
        // Not an answer of the server but a failure to reach it (an HTTP server that went away).
        this.logger.warn(`MCP server ${this.config.name}: a call failed to reach it: ${messageOf(err)}`);
        this.dropped(client, messageOf(err));
        void client.close().catch(() => undefined);
        throw this.unavailable();
      }
      throw new ToolError(
        'MCP_TOOL_ERROR',
        `The MCP server ${this.config.name} answered with an error: ${this.scrub(err.message)}`,
      );
    }
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    this.setStatus('connecting', null);
    this.stderrTail = '';
    const client = new Client(
      { name: 'loopwright', version: '0.1.0' },
      { capabilities: {}, jsonSchemaValidator: lazyOutputValidator },
    );
    client.onclose = () => this.dropped(client, 'the connection closed');
    client.onerror = (err) => this.logger.debug(`MCP server ${this.config.name}: ${messageOf(err)}`);
    // However many notices a server sends, one refresh runs at a time and at most one more waits.
    const refresher = new CoalescedTask(
      () => this.refresh(client),
      (err) => this.refreshFailed(client, err),
    );
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      // Handled: a failure reaches refreshFailed (and the attempt under way, if any).
      void refresher.request();
    });
    this.attempt = client;
    try {
      await client.connect(this.transport(), { timeout: this.config.timeoutMs });
      if (this.stopped) {
        await client.close();
        return;
      }
      this.client = client;
      await refresher.request();
      this.retries = 0;
      this.setStatus('connected', null);
      this.logger.log(`MCP server ${this.config.name} connected (${this.listed.length} tools)`);
    } catch (err) {
      const reason = this.withStderr(messageOf(err));
      if (this.client === client) this.client = null;
      client.onclose = undefined;
      await client.close().catch(() => undefined);
      if (this.stopped) return;
      this.logger.warn(`MCP server ${this.config.name} could not be reached: ${reason}`);
      this.setStatus('failed', reason);
      this.scheduleRetry();
    } finally {
      if (this.attempt === client) this.attempt = null;
    }
  }

  /**
   * Re-reads the tool list (every page, within MCP_MAX_LIST_PAGES and MCP_MAX_TOOLS); tools that
   * need MCP tasks are not offered. A tool listed as before keeps its object, so what was built
   * from it (its compiled schema) is kept too; nothing changes when nothing did.
   */
  private async refresh(client: Client): Promise<void> {
    const tools: McpListedTool[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      if (pages === MCP_MAX_LIST_PAGES) {
        throw new McpToolListTooLong(
          `its tool list goes on past ${MCP_MAX_LIST_PAGES} pages (the most read from a server)`,
        );
      }
      const page = await client.listTools(cursor === undefined ? {} : { cursor }, {
        timeout: this.config.timeoutMs,
      });
      pages += 1;
      tools.push(...page.tools);
      if (tools.length > MCP_MAX_TOOLS) {
        throw new McpToolListTooLong(
          `it lists more than ${MCP_MAX_TOOLS} tools (the most taken from a server)`,
        );
      }
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    if (client !== this.client) return;
    const allowed = this.config.tools === null ? null : new Set(this.config.tools);
    const before = new Map(this.listed.map((tool) => [tool.name, tool]));
    const listed = tools
      .filter(
        (tool) => (allowed === null || allowed.has(tool.name)) && tool.execution?.taskSupport !== 'required',
      )
      .map((tool) => {
        const known = before.get(tool.name);
        return known !== undefined && JSON.stringify(known) === JSON.stringify(tool) ? known : tool;
      });
    const changed = listed.length !== this.listed.length || listed.some((tool, i) => tool !== this.listed[i]);
    this.listed = listed;
    if (changed) this.onChange();
  }

  /** A refresh after a notice failed: a list past the caps fails the server; anything else keeps the last list. */
  private refreshFailed(client: Client, err: unknown): void {
    if (client !== this.client || this.status !== 'connected') return; // the attempt itself reports it
    if (!(err instanceof McpToolListTooLong)) {
      this.logger.warn(`MCP server ${this.config.name}: refreshing its tools failed: ${messageOf(err)}`);
      return;
    }
    this.dropped(client, err.message);
    void client.close().catch(() => undefined);
  }

  private dropped(client: Client, reason: string): void {
    if (this.client !== client || this.stopped) return;
    this.client = null;
    const explained = this.withStderr(reason);
    this.logger.warn(`MCP server ${this.config.name} dropped: ${explained}`);
    this.setStatus('failed', explained);
    this.scheduleRetry();
  }

  private scheduleRetry(): void {
    if (this.stopped) return;
    const delay = Math.min(FIRST_RETRY_MS * 2 ** this.retries, MAX_RETRY_MS);
    this.retries += 1;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void this.connect(), delay);
    this.retryTimer.unref();
  }

  private setStatus(status: McpStatus, error: string | null): void {
    this.status = status;
    this.error = error === null ? null : this.scrub(error);
    this.onChange();
  }

  private transport(): Transport {
    const config = this.config;
    if (config.transport === 'http') {
      return new StreamableHTTPClientTransport(new URL(config.url), {
        requestInit: { headers: { ...config.headers } },
      });
    }
    const transport = new StdioClientTransport({
      command: config.command,
      args: [...config.args],
      env: { ...config.env },
      ...(config.cwd === null ? {} : { cwd: config.cwd }),
      stderr: 'pipe',
    });
    // Read it always: a child whose stderr pipe fills up would block.
    transport.stderr?.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      this.stderrTail = (this.stderrTail + text).slice(-STDERR_TAIL_CHARS);
      this.logger.debug(`MCP server ${config.name} stderr: ${text.trimEnd()}`);
    });
    return transport;
  }

  private withStderr(reason: string): string {
    const lastLine = this.stderrTail.trim().split('\n').at(-1);
    return lastLine ? `${reason} (stderr: ${lastLine})` : reason;
  }

  private unavailable(): ToolError {
    const why = this.error === null ? '' : ` (${this.error})`;
    return new ToolError(
      'MCP_UNAVAILABLE',
      `The MCP server ${this.config.name} is not available right now${why}; its tools cannot run. Try again later or do without it.`,
    );
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
