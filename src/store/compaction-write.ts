import type { SummarizedSpan } from '../persistence/entities/message.entity';
import type { SqlStatement } from './run-store.service';

/*
 * What a compaction ("Long sessions") changes in a conversation, and the statements that store it.
 * It only marks messages and adds a summary: every message keeps its content, so a client still
 * reads the whole conversation and only what the model gets shrinks.
 */

/** A summary that stands in for older messages: stored at `seq` (x.5, where the span was). */
export interface NewSummary {
  id: string;
  seq: number;
  content: string;
  summarizes: SummarizedSpan;
}

/** What one compaction marks and adds: it rewrites no message's content. */
export interface CompactionWrite {
  pruned: readonly string[];
  summarized: readonly string[];
  summary: NewSummary | null;
}

/**
 * The pruned and summarized marks, and the summary in its place; nothing for an empty part. Marks
 * only grow (a summarized message stays summarized; a pruned one may later be summarized).
 */
export function compactionSql(sessionId: string, runId: string | null, c: CompactionWrite): SqlStatement[] {
  const statements: SqlStatement[] = [];
  if (c.pruned.length > 0) {
    statements.push({
      sql: `UPDATE messages SET context = 'pruned' WHERE session_id = $1 AND id = ANY($2::uuid[]) AND context IS NULL`,
      params: [sessionId, c.pruned],
    });
  }
  if (c.summarized.length > 0) {
    statements.push({
      sql: `UPDATE messages SET context = 'summarized' WHERE session_id = $1 AND id = ANY($2::uuid[])`,
      params: [sessionId, c.summarized],
    });
  }
  if (c.summary) {
    statements.push({
      sql: `INSERT INTO messages (id, session_id, run_id, seq, role, content, kind, summarizes)
         VALUES ($1, $2, $3, $4::float8, 'system', $5, 'summary', $6::jsonb)`,
      params: [
        c.summary.id,
        sessionId,
        runId,
        c.summary.seq,
        c.summary.content,
        JSON.stringify(c.summary.summarizes),
      ],
    });
  }
  return statements;
}
