import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { ScheduleOnActive } from '../persistence/entities/schedule.entity';
import { returningRows } from './store-sql';

export type { ScheduleOnActive };

/** A schedule as stored ("Schedules and webhooks"). */
export interface ScheduleRow {
  id: string;
  owner: string;
  endUser: string | null;
  cron: string;
  timezone: string;
  prompt: string;
  sessionId: string | null;
  /** The options of the session each run creates when there is no sessionId. */
  sessionOptions: Record<string, unknown>;
  onActive: ScheduleOnActive;
  enabled: boolean;
  nextRunAt: Date | null;
  createdAt: Date;
}

/** A schedule's changes (PATCH): only the fields given. */
export interface ScheduleChanges {
  cron?: string;
  timezone?: string;
  prompt?: string;
  enabled?: boolean;
  nextRunAt?: Date | null;
}

/** One due time of a schedule: the run it started, or none (skipped, or not started yet). */
export interface ScheduleRunRow {
  runId: string | null;
  sessionId: string | null;
  /** The run's status; `skipped`, or `pending` between the claim and the start. */
  status: string;
  dueAt: Date;
  startedAt: Date | null;
}

/** A due time claimed by this process: recorded once (its unique key), the schedule advanced. */
export interface ClaimedDueTime {
  scheduleRunId: string;
  schedule: ScheduleRow;
  dueAt: Date;
}

const COLUMNS = `id, owner, end_user AS "endUser", cron, timezone, prompt, session_id AS "sessionId",
  session_options AS "sessionOptions", on_active AS "onActive", enabled, next_run_at AS "nextRunAt",
  created_at AS "createdAt"`;

/** Whose schedules a request sees: the key's; with an end user, only that end user's. */
const SCOPE = `owner = $1 AND ($2::text IS NULL OR end_user = $2)`;

/** Schedules and their due times; the claim that makes each due time start exactly one run. */
@Injectable()
export class ScheduleStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async insert(row: Omit<ScheduleRow, 'createdAt'>): Promise<ScheduleRow> {
    const rows: ScheduleRow[] = await this.db.query(
      `INSERT INTO schedules (id, owner, end_user, cron, timezone, prompt, session_id, session_options, on_active, enabled, next_run_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11) RETURNING ${COLUMNS}`,
      [
        row.id,
        row.owner,
        row.endUser,
        row.cron,
        row.timezone,
        row.prompt,
        row.sessionId,
        JSON.stringify(row.sessionOptions),
        row.onActive,
        row.enabled,
        row.nextRunAt,
      ],
    );
    return rows[0];
  }

  async find(owner: string, endUser: string | null, id: string): Promise<ScheduleRow | null> {
    const rows: ScheduleRow[] = await this.db.query(
      `SELECT ${COLUMNS} FROM schedules WHERE ${SCOPE} AND id = $3`,
      [owner, endUser, id],
    );
    return rows[0] ?? null;
  }

  /** Newest first, `limit` after the cursor (`createdAt` as PostgreSQL's text, `id`). */
  async list(
    owner: string,
    endUser: string | null,
    limit: number,
    cursor: { createdAt: string; id: string } | null,
  ): Promise<(ScheduleRow & { cursorAt: string })[]> {
    return this.db.query(
      `SELECT ${COLUMNS}, created_at::text AS "cursorAt" FROM schedules WHERE ${SCOPE}
         ${cursor ? 'AND (created_at, id) < ($4::timestamptz, $5::uuid)' : ''}
       ORDER BY created_at DESC, id DESC LIMIT $3`,
      cursor ? [owner, endUser, limit, cursor.createdAt, cursor.id] : [owner, endUser, limit],
    );
  }

  async update(
    owner: string,
    endUser: string | null,
    id: string,
    changes: ScheduleChanges,
  ): Promise<ScheduleRow | null> {
    const sets: string[] = ['updated_at = now()'];
    const params: unknown[] = [owner, endUser, id];
    const set = (column: string, value: unknown) => {
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    };
    if (changes.cron !== undefined) set('cron', changes.cron);
    if (changes.timezone !== undefined) set('timezone', changes.timezone);
    if (changes.prompt !== undefined) set('prompt', changes.prompt);
    if (changes.enabled !== undefined) set('enabled', changes.enabled);
    if (changes.nextRunAt !== undefined) set('next_run_at', changes.nextRunAt);
    const rows = returningRows<ScheduleRow>(
      await this.db.query(
        `UPDATE schedules SET ${sets.join(', ')} WHERE ${SCOPE} AND id = $3 RETURNING ${COLUMNS}`,
        params,
      ),
    );
    return rows[0] ?? null;
  }

  async delete(owner: string, endUser: string | null, id: string): Promise<boolean> {
    const rows = returningRows<{ id: string }>(
      await this.db.query(`DELETE FROM schedules WHERE ${SCOPE} AND id = $3 RETURNING id`, [
        owner,
        endUser,
        id,
      ]),
    );
    return rows.length > 0;
  }

  /** The schedule's due times, newest first (at most `limit`), with each started run's status now. */
  async runs(scheduleId: string, limit: number): Promise<ScheduleRunRow[]> {
    return this.db.query(
      `SELECT sr.run_id AS "runId", sr.session_id AS "sessionId", sr.due_at AS "dueAt", sr.started_at AS "startedAt",
              CASE WHEN sr.status = 'started' THEN coalesce(r.status, 'deleted') ELSE sr.status END AS status
         FROM schedule_runs sr LEFT JOIN runs r ON r.id = sr.run_id
        WHERE sr.schedule_id = $1 ORDER BY sr.due_at DESC LIMIT $2`,
      [scheduleId, limit],
    );
  }

  /**
   * Claims up to `limit` due schedules — each by exactly one process of all on the database (FOR
   * UPDATE SKIP LOCKED) — and, in the same transaction, records each due time once (its unique
   * key) and moves the schedule to `next(schedule)`, its next due time after now: times missed while
   * no process ran are one due time, not one each.
   */
  async claimDue(limit: number, next: (schedule: ScheduleRow) => Date | null): Promise<ClaimedDueTime[]> {
    return this.db.transaction(async (tx) => {
      const due: ScheduleRow[] = await tx.query(
        `SELECT ${COLUMNS} FROM schedules WHERE enabled AND next_run_at <= now()
          ORDER BY next_run_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [limit],
      );
      const claimed: ClaimedDueTime[] = [];
      for (const schedule of due) {
        const dueAt = schedule.nextRunAt as Date;
        const recorded: { id: string }[] = await tx.query(
          `INSERT INTO schedule_runs (id, schedule_id, due_at) VALUES (gen_random_uuid(), $1, $2)
           ON CONFLICT (schedule_id, due_at) DO NOTHING RETURNING id`,
          [schedule.id, dueAt],
        );
        await tx.query(`UPDATE schedules SET next_run_at = $2 WHERE id = $1`, [schedule.id, next(schedule)]);
        if (recorded.length > 0) claimed.push({ scheduleRunId: recorded[0].id, schedule, dueAt });
      }
      return claimed;
    });
  }

  /**
   * Due times claimed more than `olderThanMs` ago and still not started: their process died between
   * the claim and the start (or is that slow). Those due within `startWithinMs` are claimed again by
   * this process (at most `limit`, none claimed by two), to be started under the same due time's
   * key — a run the first claimant did start is found, not started twice; older ones are skipped.
   */
  async reclaimAbandoned(
    olderThanMs: number,
    startWithinMs: number,
    limit: number,
  ): Promise<ClaimedDueTime[]> {
    await this.db.query(
      `UPDATE schedule_runs SET status = 'skipped'
        WHERE status = 'pending' AND claimed_at < now() - $1::int * interval '1 millisecond'
          AND due_at < now() - $2::int * interval '1 millisecond'`,
      [olderThanMs, startWithinMs],
    );
    const rows: (ScheduleRow & { scheduleRunId: string; dueAt: Date })[] = await this.db.query(
      `WITH lost AS (
         SELECT id FROM schedule_runs
          WHERE status = 'pending' AND claimed_at < now() - $1::int * interval '1 millisecond'
          ORDER BY due_at LIMIT $2 FOR UPDATE SKIP LOCKED
       ), again AS (
         UPDATE schedule_runs r SET claimed_at = now() FROM lost WHERE r.id = lost.id
         RETURNING r.id AS due_id, r.schedule_id AS due_schedule_id, r.due_at AS due_time
       )
       SELECT again.due_id AS "scheduleRunId", again.due_time AS "dueAt", ${COLUMNS}
         FROM again JOIN schedules ON schedules.id = again.due_schedule_id`,
      [olderThanMs, limit],
    );
    return rows.map(({ scheduleRunId, dueAt, ...schedule }) => ({ scheduleRunId, dueAt, schedule }));
  }

  /** What became of a claimed due time: its run, or skipped. */
  async settleDueTime(
    scheduleRunId: string,
    outcome: { runId: string; sessionId: string } | 'skipped',
  ): Promise<void> {
    if (outcome === 'skipped') {
      await this.db.query(`UPDATE schedule_runs SET status = 'skipped' WHERE id = $1`, [scheduleRunId]);
      return;
    }
    await this.db.query(
      `UPDATE schedule_runs SET status = 'started', run_id = $2, session_id = $3, started_at = now() WHERE id = $1`,
      [scheduleRunId, outcome.runId, outcome.sessionId],
    );
  }
}
