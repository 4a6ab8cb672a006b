import type { Params } from './params';
import type { EventRecord } from './event-record';

/** A child's events its ancestors' streams do not show: their own start and end say it (subagent_*). */
const UNCOPIED = new Set(['run_started', 'done', 'error', 'queued']);

/**
 * The statements that copy a child run's events into the log of each of its ancestors waiting for
 * it (docs/decisions/022): each ancestor's `last_seq` moved on by the copies (its row locked by that
 * update, so writers of one log take turns and its numbers stay gap-free), and the copies numbered
 * from there, each keeping the child's `runId` and adding `parentRunId` (the child's own parent).
 * `first`: the index of the first of these among the statement's CTEs (withCtes names them w<i>);
 * `channel`: where followers of a log are told of new events (RunStore's).
 */
export function ancestorCopies(
  p: Params,
  id: string,
  events: readonly EventRecord[],
  first: number,
  channel: string,
): string[] {
  const copies = events.filter((e) => !UNCOPIED.has(e.type));
  if (copies.length === 0) return [];
  const n = `${p.add(copies.length)}::int`;
  const parentOf = (run: string) =>
    `SELECT s.parent_run_id FROM runs r JOIN sessions s ON s.id = r.session_id WHERE r.id = ${run}`;
  return [
    `UPDATE runs SET last_seq = last_seq + ${n}, updated_at = now()
      WHERE status = 'requires_action' AND id IN (
        WITH RECURSIVE up(run_id, depth) AS (
          SELECT (${parentOf(id)}), 1
          UNION ALL
          SELECT (${parentOf('up.run_id')}), up.depth + 1 FROM up WHERE up.run_id IS NOT NULL AND up.depth < 64
        ) SELECT run_id FROM up WHERE run_id IS NOT NULL)
      RETURNING id, last_seq - ${n} AS base, pg_notify('${channel}', id::text || ' ' || last_seq::text)`,
    `INSERT INTO run_events (run_id, seq, type, payload)
       SELECT b.id, b.base + u.ord, u.type,
              (u.payload::jsonb || jsonb_build_object('seq', b.base + u.ord, 'parentRunId', (${parentOf(id)})))::json
         FROM w${first} b,
              unnest(${p.add(copies.map((e) => e.type))}::text[], ${p.add(copies.map((e) => e.data))}::text[])
                WITH ORDINALITY AS u(type, payload, ord)`,
  ];
}
