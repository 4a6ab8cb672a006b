import type { SummarizedSpan } from '../persistence/entities/message.entity';
import type { Params } from './params';

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
export function compactionSql(
  p: Params,
  sessionId: string,
  runId: string | null,
  c: CompactionWrite,
): string[] {
  const statements: string[] = [];
  if (c.pruned.length > 0) {
    statements.push(
      `UPDATE messages SET context = 'pruned'
        WHERE session_id = ${p.add(sessionId)}::uuid AND id = ANY(${p.add(c.pruned)}::uuid[]) AND context IS NULL`,
    );
  }
  if (c.summarized.length > 0) {
    statements.push(
      `UPDATE messages SET context = 'summarized'
        WHERE session_id = ${p.add(sessionId)}::uuid AND id = ANY(${p.add(c.summarized)}::uuid[])`,
    );
  }
  if (c.summary) {
    const s = c.summary;
    statements.push(
      `INSERT INTO messages (id, session_id, run_id, seq, role, content, kind, summarizes)
         VALUES (${p.add(s.id)}::uuid, ${p.add(sessionId)}::uuid, ${p.add(runId)}::uuid, ${p.add(s.seq)}::float8, 'system',
                 ${p.add(s.content)}, 'summary', ${p.add(JSON.stringify(s.summarizes))}::jsonb)`,
    );
  }
  return statements;
}
