import { randomUUID } from 'node:crypto';
import { returningRows, type Queryable } from './store-sql';

/*
 * One on-demand compaction of a session at a time, across every replica: a claim on the session's
 * row, taken before the summary's model call, so a second request is refused before it spends one.
 * The claim expires on its own: a process that dies mid-summary holds nobody up for longer than
 * COMPACTION_CLAIM_MS.
 */

/**
 * Longer than any summary call takes (one streamed answer, LLM_IDLE_TIMEOUT_MS at most between two
 * of its chunks); after it, a claim whose holder died is free. A holder slower than that finds, when
 * it stores, that its claim was taken over, and stores nothing.
 */
export const COMPACTION_CLAIM_MS = 10 * 60_000;

/** Who holds a session's compaction: the token its release and its storing must present. */
export interface CompactionClaim {
  token: string;
  /** Where the conversation stood when claimed: a summary is stored only if it still stands there. */
  nextMessageSeq: number;
}

/**
 * Claims the session's compaction, unless another is under way (an unexpired claim) or a run is
 * active; null when refused. Two claims of one row are serialised by PostgreSQL: the second sees
 * the first's claim and takes nothing.
 */
export async function claimCompaction(q: Queryable, sessionId: string): Promise<CompactionClaim | null> {
  const token = randomUUID();
  const rows = returningRows<{ nextMessageSeq: number }>(
    await q.query(
      `UPDATE sessions s SET compaction_claim = $2::uuid,
              compaction_claimed_until = now() + $3::int * interval '1 millisecond'
        WHERE s.id = $1
          AND (s.compaction_claimed_until IS NULL OR s.compaction_claimed_until < now())
          AND NOT EXISTS (SELECT 1 FROM runs r
                           WHERE r.session_id = s.id AND r.status IN ('running', 'requires_action'))
        RETURNING s.next_message_seq AS "nextMessageSeq"`,
      [sessionId, token, COMPACTION_CLAIM_MS],
    ),
  );
  return rows.length > 0 ? { token, nextMessageSeq: rows[0].nextMessageSeq } : null;
}

/** Lets the claim go; false when it was no longer held (expired and taken over, or let go before). */
export async function releaseCompaction(
  q: Queryable,
  sessionId: string,
  claim: CompactionClaim,
): Promise<boolean> {
  const rows = returningRows<{ id: string }>(
    await q.query(
      `UPDATE sessions SET compaction_claim = NULL, compaction_claimed_until = NULL
        WHERE id = $1 AND compaction_claim = $2::uuid RETURNING id`,
      [sessionId, claim.token],
    ),
  );
  return rows.length > 0;
}
