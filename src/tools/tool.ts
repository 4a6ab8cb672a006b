import type { AppConfig } from '../config/app-config';
import type { FileChange } from '../common/file-change';
import type { TSchema } from 'typebox';

export type { FileChange };

export type ToolKind = 'read' | 'write' | 'exec';

/** Stable codes a client can rely on in `tool_call_result.errorCode`. */
export type ToolErrorCode =
  | 'UNKNOWN_TOOL'
  | 'INVALID_ARGUMENTS'
  | 'NOT_FOUND'
  | 'PERMISSION_DENIED'
  | 'TIMEOUT'
  | 'SIZE_LIMIT'
  | 'REJECTED'
  | 'EXPIRED'
  | 'CANCELLED'
  | 'REPEATED_CALL'
  | 'MAX_ITERATIONS'
  | 'CONFLICT'
  | 'EXECUTION_ERROR'
  /** An MCP server answered the call with `isError: true`. */
  | 'MCP_TOOL_ERROR'
  /** The MCP server of this tool is not connected (down, restarting, or it dropped during the call). */
  | 'MCP_UNAVAILABLE'
  /** The server stopped while the call ran (a take-over): whether it had an effect is unknown. */
  | 'INTERRUPTED';

/** A tool failure with a message the model can act on. Thrown from `execute`. */
export class ToolError extends Error {
  constructor(
    readonly code: ToolErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ToolError';
  }
}

export interface ToolResult {
  content: string;
  isError?: boolean;
  errorCode?: ToolErrorCode;
  truncated?: boolean;
  changes?: FileChange[];
  /**
   * An image or PDF the result hands the model ("Attachments": read_file of one), beside its text.
   * The step stores it as a file of the session's key and end user, and the tool message keeps the
   * reference; each provider sends it natively.
   */
  attachment?: ToolAttachment;
}

/** A file a tool result carries, its bytes within FILE_MAX_BYTES. */
export interface ToolAttachment {
  name: string;
  /** Told by its bytes: one of common/media-types' images, or a PDF. */
  mediaType: string;
  bytes: Buffer;
  /** An image's pixels (what the context window counts it by). */
  width: number | null;
  height: number | null;
}

export interface ToolContext {
  /** The real path of the session's workspace folder. Reach files only through the path guard. */
  workspaceRoot: string;
  /** Aborted on cancel, on the tool's timeout, and on shutdown. */
  signal: AbortSignal;
  runId: string;
  sessionId: string;
  /** The call's stored id. */
  toolCallId: string;
  /** Stream live output (stdout/stderr) of a long tool to the client. */
  emitOutput(stream: 'stdout' | 'stderr', chunk: string): void;
  config: AppConfig;
  /**
   * Whether the run's model takes images and PDFs (ToolResult.attachment): false when the model
   * registry knows it does not; absent, it is assumed to (as a model the registry does not know).
   */
  modelTakesFiles?: boolean;
}

/**
 * A tool is a contract: a name, a description, a JSON Schema for its arguments, a kind for policies,
 * and `execute`. Arguments are validated against `parameters` before `execute` is called.
 */
export interface Tool<Args = Record<string, unknown>> {
  readonly name: string;
  readonly description: string;
  readonly parameters: Record<string, unknown>;
  readonly kind: ToolKind;
  /** Where the tool comes from: `builtin` when absent, `mcp:<server>` for a tool of an MCP server. */
  readonly source?: `mcp:${string}`;
  /**
   * A companion of another tool (get_command_output of run_command): offered exactly where that tool
   * is — whatever a session's `tools` list names — and then run without approval.
   */
  readonly offeredWith?: { readonly name: string; readonly kind: ToolKind };
  /** Whether this tool is offered at all under this configuration (e.g. run_command behind a flag). */
  isEnabled?(config: AppConfig): boolean;
  /** Timeout for one call; defaults to TOOL_TIMEOUT_MS. */
  timeoutMs?(args: Args, config: AppConfig): number;
  /** A short text for the person asked to approve the call (write tools show the diff). */
  describeForApproval?(args: Args, ctx: Omit<ToolContext, 'emitOutput'>): Promise<string>;
  execute(args: Args, ctx: ToolContext): Promise<ToolResult>;
}

/** What the model is offered of a tool: its name, what it does, and its arguments' JSON Schema. */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/**
 * A tool's arguments are declared once, with TypeBox: the declaration is both the JSON Schema the
 * model is offered (and ajv validates) and, through `Static<>`, the TypeScript type `execute` gets.
 * A TypeBox schema is a plain JSON Schema object; this gives it the registry's record type.
 */
export function jsonSchemaOf(schema: TSchema): Record<string, unknown> {
  return schema as unknown as Record<string, unknown>;
}
