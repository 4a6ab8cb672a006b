import { randomUUID } from 'node:crypto';
import type { MessageRole, StoredMessagePart, StoredToolCall } from '../persistence/entities/message.entity';
import type { StoredProviderData } from './message-row';
import type { Params } from './params';

/*
 * The statements that add messages to a conversation, built into the caller's parameters but not
 * run: the caller runs them in its transaction, or folds them with a step's other writes and
 * events into one statement (RunJournal).
 */

/** A message to store at a position the caller reserved; its id is drawn here when it has none. */
export interface NewMessage {
  id?: string;
  seq: number;
  role: MessageRole;
  content: string | null;
  toolCalls?: StoredToolCall[] | null;
  toolCallId?: string | null;
  reasoning?: string | null;
  providerData?: StoredProviderData | null;
  /** Its parts when it holds files (a tool result with an attachment: its text, then the file). */
  parts?: StoredMessagePart[] | null;
}

/**
 * Stores the messages at their positions in one statement however many there are (the columns
 * as arrays, `unnest`ed).
 */
export function insertMessagesSql(
  p: Params,
  sessionId: string,
  runId: string | null,
  messages: NewMessage[],
): string {
  return `INSERT INTO messages (id, session_id, run_id, seq, role, content, tool_calls, tool_call_id, reasoning, provider_data, parts)
            SELECT u.id, ${p.add(sessionId)}::uuid, ${p.add(runId)}::uuid, u.seq, u.role, u.content, u.tool_calls::jsonb,
                   u.tool_call_id, u.reasoning, u.provider_data::jsonb, u.parts::jsonb
              FROM unnest(${p.add(messages.map((m) => m.id ?? randomUUID()))}::uuid[],
                          ${p.add(messages.map((m) => m.seq))}::int[],
                          ${p.add(messages.map((m) => m.role))}::text[],
                          ${p.add(messages.map((m) => m.content))}::text[],
                          ${p.add(messages.map((m) => (m.toolCalls ? JSON.stringify(m.toolCalls) : null)))}::text[],
                          ${p.add(messages.map((m) => m.toolCallId ?? null))}::text[],
                          ${p.add(messages.map((m) => m.reasoning ?? null))}::text[],
                          ${p.add(messages.map((m) => (m.providerData ? JSON.stringify(m.providerData) : null)))}::text[],
                          ${p.add(messages.map((m) => (m.parts ? JSON.stringify(m.parts) : null)))}::text[])
                AS u(id, seq, role, content, tool_calls, tool_call_id, reasoning, provider_data, parts)`;
}

/** Moves the session's next message position past what the driving process has written. */
export function advanceMessageSeqSql(p: Params, sessionId: string, nextSeq: number): string {
  return `UPDATE sessions SET next_message_seq = GREATEST(next_message_seq, ${p.add(nextSeq)}::int), updated_at = now()
           WHERE id = ${p.add(sessionId)}::uuid`;
}
