import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { returningRows } from './store-sql';

export type BackgroundCommandStatus = 'running' | 'exited' | 'stopped';
export type BackgroundCommandStopReason = 'cancelled' | 'timeout' | 'limit' | 'session' | 'process';

export interface BackgroundCommandRow {
  commandId: string;
  sessionId: string;
  command: string;
  status: BackgroundCommandStatus;
  exitCode: number | null;
  stopReason: BackgroundCommandStopReason | null;
  processId: string;
  startedAt: Date;
  endedAt: Date | null;
}

/**
 * A running row whose lease lapsed reads as stopped by its process, with its lease's end as its end:
 * its process died (or cannot reach the database, and stops the command at its next renewal).
 */
const LAPSED = `(status = 'running' AND lease_expires_at < now())`;
const COLUMNS = `id AS "commandId", session_id AS "sessionId", command,
  CASE WHEN ${LAPSED} THEN 'stopped' ELSE status END AS status, exit_code AS "exitCode",
  CASE WHEN ${LAPSED} THEN 'process' ELSE stop_reason END AS "stopReason", process_id AS "processId",
  started_at AS "startedAt", CASE WHEN ${LAPSED} THEN lease_expires_at ELSE ended_at END AS "endedAt"`;

/** Background commands (BackgroundCommandEntity): their durable list, leased to the process that runs each. */
@Injectable()
export class BackgroundCommandStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Inserts a running row unless the session has `max` running already. The session's row is locked
   * first (FOR NO KEY UPDATE: inserts of its messages and runs do not wait), so of two starts in
   * one session the second counts the first.
   */
  async open(row: {
    commandId: string;
    sessionId: string;
    command: string;
    processId: string;
    leaseMs: number;
    max: number;
  }): Promise<'opened' | 'full' | 'no-session'> {
    return this.db.transaction(async (tx) => {
      const sessions: { owner: string }[] = await tx.query(
        `SELECT owner FROM sessions WHERE id = $1 FOR NO KEY UPDATE`,
        [row.sessionId],
      );
      const owner = sessions[0]?.owner;
      if (owner === undefined) return 'no-session';
      const running: { n: number }[] = await tx.query(
        `SELECT count(*)::int AS n FROM background_commands WHERE session_id = $1 AND status = 'running' AND lease_expires_at >= now()`,
        [row.sessionId],
      );
      if ((running[0]?.n ?? 0) >= row.max) return 'full';
      await tx.query(
        `INSERT INTO background_commands (id, session_id, owner, command, process_id, lease_expires_at)
         VALUES ($1, $2, $3, $4, $5, now() + $6::int * interval '1 millisecond')`,
        [row.commandId, row.sessionId, owner, row.command, row.processId, row.leaseMs],
      );
      return 'opened';
    });
  }

  /** Its end, unless something else ended it first (a cancel from another process, a lapsed lease). */
  async end(
    commandId: string,
    status: Exclude<BackgroundCommandStatus, 'running'>,
    exitCode: number | null,
    reason: BackgroundCommandStopReason | null,
  ): Promise<void> {
    await this.db.query(
      `UPDATE background_commands SET status = $2, exit_code = $3, stop_reason = $4, ended_at = now()
        WHERE id = $1 AND status = 'running'`,
      [commandId, status, exitCode, reason],
    );
  }

  /** Renews the live leases of `processId`'s commands; answers for each row still there whether it was renewed. */
  async renew(
    processId: string,
    commandIds: string[],
    leaseMs: number,
  ): Promise<
    {
      commandId: string;
      renewed: boolean;
      status: BackgroundCommandStatus;
      stopReason: BackgroundCommandStopReason | null;
    }[]
  > {
    return this.db.query(
      `WITH renewed AS (
         UPDATE background_commands SET lease_expires_at = now() + $3::int * interval '1 millisecond'
          WHERE id = ANY($1::uuid[]) AND process_id = $2 AND status = 'running' AND lease_expires_at >= now()
          RETURNING id
       )
       SELECT b.id AS "commandId", r.id IS NOT NULL AS renewed,
              CASE WHEN ${LAPSED} THEN 'stopped' ELSE b.status END AS status,
              CASE WHEN ${LAPSED} THEN 'process' ELSE b.stop_reason END AS "stopReason"
         FROM background_commands b LEFT JOIN renewed r ON r.id = b.id
        WHERE b.id = ANY($1::uuid[])`,
      [commandIds, processId, leaseMs],
    );
  }

  async find(sessionId: string, commandId: string): Promise<BackgroundCommandRow | null> {
    const rows: BackgroundCommandRow[] = await this.db.query(
      `SELECT ${COLUMNS} FROM background_commands WHERE id = $1 AND session_id = $2`,
      [commandId, sessionId],
    );
    return rows[0] ?? null;
  }

  /** The session's commands, oldest first (the owner's session only). */
  async list(owner: string, sessionId: string): Promise<BackgroundCommandRow[]> {
    return this.db.query(
      `SELECT ${COLUMNS} FROM background_commands WHERE session_id = $1 AND owner = $2 ORDER BY started_at, id`,
      [sessionId, owner],
    );
  }

  /** Marks the session's running command stopped; its process ends it at its next renewal. */
  async stop(sessionId: string, commandId: string, reason: BackgroundCommandStopReason): Promise<boolean> {
    const rows = returningRows<{ id: string }>(
      await this.db.query(
        `UPDATE background_commands SET status = 'stopped', stop_reason = $3, ended_at = now()
          WHERE id = $1 AND session_id = $2 AND status = 'running' RETURNING id`,
        [commandId, sessionId, reason],
      ),
    );
    return rows.length > 0;
  }

  /** Marks stopped (by their process) the running rows of `processId` and those whose lease lapsed. */
  async stopLost(processId: string): Promise<number> {
    const rows = returningRows<{ id: string }>(
      await this.db.query(
        `UPDATE background_commands SET status = 'stopped', stop_reason = 'process',
                ended_at = LEAST(now(), lease_expires_at)
          WHERE status = 'running' AND (process_id = $1 OR lease_expires_at < now()) RETURNING id`,
        [processId],
      ),
    );
    return rows.length;
  }
}
