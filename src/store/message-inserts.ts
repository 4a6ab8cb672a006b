import { randomUUID } from 'node:crypto';
import type { MessageRole, StoredToolCall } from '../persistence/entities/message.entity';
import type { StoredProviderData } from './message-row';
import type { SqlStatement } from './run-store.service';

/*
 * The statements that add messages to a conversation, built but not run: the caller runs them in
 * its transaction, or folds them with a step's other writes and events into one statement
 * (RunStore.writeWithEvents).
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
}

/**
 * Stores the messages at their positions in one statement however many there are (the columns
 * as arrays, `unnest`ed).
 */
export function insertMessagesSql(
  sessionId: string,
  runId: string | null,
  messages: NewMessage[],
): SqlStatement {
  return {
    sql: `INSERT INTO messages (id, session_id, run_id, seq, role, content, tool_calls, tool_call_id, reasoning, provider_data)
            SELECT u.id, $1::uuid, $2::uuid, u.seq, u.role, u.content, u.tool_calls::jsonb, u.tool_call_id, u.reasoning,
                   u.provider_data::jsonb
              FROM unnest($3::uuid[], $4::int[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[])
                AS u(id, seq, role, content, tool_calls, tool_call_id, reasoning, provider_data)`,
    params: [
      sessionId,
      runId,
      messages.map((m) => m.id ?? randomUUID()),
      messages.map((m) => m.seq),
      messages.map((m) => m.role),
      messages.map((m) => m.content),
      messages.map((m) => (m.toolCalls ? JSON.stringify(m.toolCalls) : null)),
      messages.map((m) => m.toolCallId ?? null),
      messages.map((m) => m.reasoning ?? null),
      messages.map((m) => (m.providerData ? JSON.stringify(m.providerData) : null)),
    ],
  };
}

/** Moves the session's next message position past what the driving process has written. */
export function advanceMessageSeqSql(sessionId: string, nextSeq: number): SqlStatement {
  return {
    sql: `UPDATE sessions SET next_message_seq = GREATEST(next_message_seq, $2::int), updated_at = now() WHERE id = $1::uuid`,
    params: [sessionId, nextSeq],
  };
}
