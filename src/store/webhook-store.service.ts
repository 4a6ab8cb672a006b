import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { returningRows } from './store-sql';

export { WEBHOOK_DUE_CHANNEL, WEBHOOK_EVENT_TYPES, type WebhookEventType } from './webhook-outbox';

/** A webhook as listed: never its secret. */
export interface WebhookRow {
  id: string;
  url: string;
  events: string[];
  createdAt: Date;
}

export interface NewWebhook {
  id: string;
  owner: string;
  endUser: string | null;
  url: string;
  events: string[];
  secret: string;
}

/** One attempt, as `GET /v1/webhooks/:id/deliveries` lists it. */
export interface WebhookAttemptRow {
  webhookId: string;
  type: string;
  attempt: number;
  status: number | null;
  error: string | null;
  at: Date;
}

/** An owed event claimed by this process for one attempt, with what it takes to send it. */
export interface ClaimedDelivery {
  id: string;
  webhookId: string;
  url: string;
  secret: string;
  type: string;
  /** The body's `data` as stored (JSON text). */
  data: string;
  createdAt: Date;
  /** This attempt's number (1 for the first). */
  attempt: number;
}

/** How an attempt went: its answer's status (null when none came) and, when it failed, why. */
export interface AttemptOutcome {
  delivered: boolean;
  status: number | null;
  error: string | null;
  /** When it failed: how long until the next attempt. */
  retryInMs: number;
}

/** The most webhooks one key may have: each run's end fans out to all of them. */
export const MAX_WEBHOOKS_PER_KEY = 100;

/** Who sees a webhook: its key, and of that key's requests those for no end user or for its own. */
const VISIBLE = `owner = $1 AND ($2::text IS NULL OR end_user = $2)`;

/**
 * Webhooks, their outbox and its attempts. The outbox rows are written by the run journal
 * (webhook-outbox.ts); here they are claimed — each by one process at a time, under a lease a killed
 * process's claim runs out of — and settled after each attempt.
 */
@Injectable()
export class WebhookStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Stores a webhook unless its key has MAX_WEBHOOKS_PER_KEY already; answers whether it did. */
  async create(w: NewWebhook): Promise<WebhookRow | null> {
    const rows: WebhookRow[] = await this.db.query(
      `INSERT INTO webhooks (id, owner, end_user, url, events, secret)
         SELECT $1::uuid, $2::text, $3::text, $4::text, $5::text[], $6::text
          WHERE (SELECT count(*) FROM webhooks WHERE owner = $2) < ${MAX_WEBHOOKS_PER_KEY}
       RETURNING id, url, events, created_at AS "createdAt"`,
      [w.id, w.owner, w.endUser, w.url, w.events, w.secret],
    );
    return rows[0] ?? null;
  }

  list(owner: string, endUser: string | null): Promise<WebhookRow[]> {
    return this.db.query(
      `SELECT id, url, events, created_at AS "createdAt" FROM webhooks
        WHERE ${VISIBLE} ORDER BY created_at, id`,
      [owner, endUser],
    );
  }

  /** Deletes the webhook with what it is owed (nothing more is sent); false when the caller sees none. */
  async delete(owner: string, endUser: string | null, id: string): Promise<boolean> {
    const result: unknown = await this.db.query(
      `DELETE FROM webhooks WHERE ${VISIBLE} AND id = $3 RETURNING id`,
      [owner, endUser, id],
    );
    return returningRows(result).length > 0;
  }

  /** The webhook's latest attempts, newest first; null when the caller sees no such webhook. */
  async attempts(
    owner: string,
    endUser: string | null,
    id: string,
    limit: number,
  ): Promise<WebhookAttemptRow[] | null> {
    const found: unknown[] = await this.db.query(`SELECT 1 FROM webhooks WHERE ${VISIBLE} AND id = $3`, [
      owner,
      endUser,
      id,
    ]);
    if (found.length === 0) return null;
    return this.db.query(
      `SELECT webhook_id AS "webhookId", type, attempt, status, error, at FROM webhook_attempts
        WHERE webhook_id = $1 ORDER BY at DESC, id DESC LIMIT $2`,
      [id, limit],
    );
  }

  /**
   * Claims up to `limit` due deliveries for one attempt each: not done, due, and not leased (or
   * leased by a process that let the lease run out — one killed mid-attempt). SKIP LOCKED: replicas
   * claiming at once each take other rows, none waits.
   */
  async claimDue(leaseOwner: string, leaseMs: number, limit: number): Promise<ClaimedDelivery[]> {
    const result: unknown = await this.db.query(
      `UPDATE webhook_deliveries d
          SET lease_owner = $1, lease_expires_at = now() + $2 * interval '1 millisecond', attempts = d.attempts + 1
         FROM webhooks w
        WHERE w.id = d.webhook_id
          AND d.id IN (SELECT id FROM webhook_deliveries
                        WHERE done_at IS NULL AND next_attempt_at <= now()
                          AND (lease_expires_at IS NULL OR lease_expires_at <= now())
                        ORDER BY next_attempt_at LIMIT $3 FOR UPDATE SKIP LOCKED)
      RETURNING d.id, d.webhook_id AS "webhookId", w.url, w.secret, d.type, d.data::text AS data,
                d.created_at AS "createdAt", d.attempts AS attempt`,
      [leaseOwner, leaseMs, limit],
    );
    return returningRows<ClaimedDelivery>(result);
  }

  /**
   * Records an attempt and settles its delivery, one statement: delivered → the row is deleted (its
   * attempts stay listed); failed → due again after `retryInMs`, or done (given up, kept until
   * `prune`) when that would be more than 24 hours after the event. A failure settles only a
   * delivery this process still leases for this attempt.
   */
  async recordAttempt(d: ClaimedDelivery, leaseOwner: string, o: AttemptOutcome): Promise<void> {
    await this.db.query(
      `WITH attempt AS (
         INSERT INTO webhook_attempts (delivery_id, webhook_id, type, attempt, status, error)
         SELECT id, webhook_id, type, $3::int, $4::int, $5::text FROM webhook_deliveries WHERE id = $1
       ), delivered AS (
         DELETE FROM webhook_deliveries WHERE id = $1 AND $7::boolean
       )
       UPDATE webhook_deliveries
          SET lease_owner = NULL, lease_expires_at = NULL,
              next_attempt_at = now() + $6 * interval '1 millisecond',
              done_at = CASE WHEN now() + $6 * interval '1 millisecond' > created_at + interval '24 hours'
                             THEN now() END
        WHERE id = $1 AND NOT $7::boolean AND done_at IS NULL AND lease_owner = $2 AND attempts = $3`,
      [d.id, leaseOwner, d.attempt, o.status, o.error, o.retryInMs, o.delivered],
    );
  }

  /**
   * Deletes up to `limit` events given up more than `retentionHours` ago, and up to `limit` attempts
   * older than that; answers the larger of the two counts (`limit`: there may be more). SKIP
   * LOCKED: replicas pruning at once take other rows.
   */
  async prune(retentionHours: number, limit: number): Promise<number> {
    const rows: { deliveries: number; attempts: number }[] = await this.db.query(
      `WITH given_up AS (
         DELETE FROM webhook_deliveries WHERE id IN (
           SELECT id FROM webhook_deliveries WHERE done_at < now() - $1 * interval '1 hour'
            LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING 1
       ), attempts AS (
         DELETE FROM webhook_attempts WHERE id IN (
           SELECT id FROM webhook_attempts WHERE at < now() - $1 * interval '1 hour'
            LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING 1
       )
       SELECT (SELECT count(*) FROM given_up)::int AS deliveries, (SELECT count(*) FROM attempts)::int AS attempts`,
      [retentionHours, limit],
    );
    return Math.max(rows[0].deliveries, rows[0].attempts);
  }

  /** Gives up this process's leases at once (a shutdown): another process attempts them without waiting. */
  async releaseLeases(leaseOwner: string, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.query(
      `UPDATE webhook_deliveries SET lease_owner = NULL, lease_expires_at = NULL
        WHERE id = ANY($1::uuid[]) AND lease_owner = $2`,
      [ids, leaseOwner],
    );
  }
}
