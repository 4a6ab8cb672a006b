import type {
  MessageContextMark,
  MessageRole,
  StoredMessagePart,
  StoredToolCall,
  SummarizedSpan,
} from '../persistence/entities/message.entity';

/*
 * A message as the store hands it out, and the column lists that select a `messages` row into that
 * shape: the type and its SQL aliases change together, so they sit together.
 */

/** A message of the conversation, read whole (`sessionMessages`) or as a run reads it (`runConversation`). */
export interface MessageRow {
  id: string;
  seq: number;
  role: MessageRole;
  content: string | null;
  toolCalls: StoredToolCall[] | null;
  toolCallId: string | null;
  runId: string | null;
  createdAt: Date;
  /** An assistant message's reasoning, when the model showed some. */
  reasoning?: string | null;
  /** What the provider that wrote it needs back (sent only to that provider). */
  providerData?: StoredProviderData | null;
  /** What the model no longer gets in full ("Long sessions"); null or absent: all of it. */
  context?: MessageContextMark | null;
  kind?: 'summary' | null;
  summarizes?: SummarizedSpan | null;
  /** A user message's parts when its prompt had files ("Attachments"); null or absent: its content. */
  parts?: StoredMessagePart[] | null;
  /**
   * A pruned tool result read for a run (`runConversation`): its content is left in the database
   * (null here) and this is its UTF-8 size, all its stub needs.
   */
  prunedBytes?: number | null;
}

/** A provider's opaque data kept with a message (llm's ProviderData). */
export interface StoredProviderData {
  provider: string;
  items: unknown[];
}

/** Every column of a message, for a client's stored conversation (`GET /v1/sessions/:id`). */
export const MESSAGE_COLUMNS = `id, seq, role, content, tool_calls AS "toolCalls", tool_call_id AS "toolCallId",
  run_id AS "runId", created_at AS "createdAt", reasoning, provider_data AS "providerData", context, kind, summarizes, parts`;

/** A message as a run reads it: a pruned tool result without its content, with its size. */
export const RUN_MESSAGE_COLUMNS = `id, seq, role, CASE WHEN context = 'pruned' THEN NULL ELSE content END AS content,
  tool_calls AS "toolCalls", tool_call_id AS "toolCallId", run_id AS "runId", created_at AS "createdAt",
  reasoning, provider_data AS "providerData", context, kind, summarizes, parts,
  CASE WHEN context = 'pruned' THEN octet_length(content) END AS "prunedBytes"`;
