import { compactionSql, type CompactionWrite } from './compaction-write';
import { advanceMessageSeqSql, insertMessagesSql, type NewMessage } from './message-inserts';
import type { Params } from './params';
import {
  insertToolCallsSql,
  settleToolCallSql,
  type CallSettlement,
  type NewToolCall,
} from './tool-call-writes';
import type { RunChanges } from './run-row.mapper';
import { releaseRunSql, spentCallSql, type SpentCall } from './usage-store.service';
import { webhookEventOf, webhookOutboxSql, type WebhookEventType } from './webhook-outbox';

/**
 * What a run's write may change besides its own row, as typed values: messages, the session's next
 * message position, tool calls and their results, a compaction's marks, a model call's usage, the
 * webhook events a new status owes, the budget reservations a run gives back.
 * No kind names the `runs` row — PostgreSQL keeps only one of two updates of a row in one
 * statement, so a run's changes travel apart, as `RunChanges`, into the statement's final
 * `UPDATE runs` (RunStore.writeWithEvents). That rule is this type, not a comment.
 */
export type RunWrite =
  | { kind: 'messages'; sessionId: string; runId: string | null; messages: NewMessage[] }
  | { kind: 'next_message_seq'; sessionId: string; nextSeq: number }
  | { kind: 'tool_calls'; calls: NewToolCall[] }
  | ({ kind: 'settle_call' } & CallSettlement)
  | { kind: 'compaction'; sessionId: string; runId: string | null; compaction: CompactionWrite }
  | ({ kind: 'spent_call' } & SpentCall)
  | { kind: 'webhook_events'; runId: string; run: RunChanges; type: WebhookEventType }
  | { kind: 'release_reservations'; runId: string };

/**
 * The writes a change of the run's own row brings with it, whoever makes the change: a status
 * webhooks are told of owes each of the key's webhooks that asked for it an event (the outbox,
 * webhook-outbox.ts). RunStore adds these to every statement that changes a run.
 */
export function writesOfRunChanges(runId: string, run: RunChanges): RunWrite[] {
  const type = webhookEventOf(run);
  return type === null ? [] : [{ kind: 'webhook_events', runId, run, type }];
}

/** The statements of one write, built into `p` (each a CTE of the run's statement). */
export function runWriteSql(p: Params, w: RunWrite): string[] {
  switch (w.kind) {
    case 'messages':
      return w.messages.length === 0 ? [] : [insertMessagesSql(p, w.sessionId, w.runId, w.messages)];
    case 'next_message_seq':
      return [advanceMessageSeqSql(p, w.sessionId, w.nextSeq)];
    case 'tool_calls':
      return w.calls.length === 0 ? [] : [insertToolCallsSql(p, w.calls)];
    case 'settle_call':
      return settleToolCallSql(p, w);
    case 'compaction':
      return compactionSql(p, w.sessionId, w.runId, w.compaction);
    case 'spent_call':
      return spentCallSql(p, w);
    case 'webhook_events':
      return [webhookOutboxSql(p, w.runId, w.run, w.type)];
    case 'release_reservations':
      return releaseRunSql(p, w.runId);
  }
}
