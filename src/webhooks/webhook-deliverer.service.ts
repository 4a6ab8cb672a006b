import { randomUUID } from 'node:crypto';
import {
  Inject,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { Backoff } from '../common/backoff';
import { Draining } from '../common/draining.service';
import { PgNotifications } from '../persistence/pg-notifications.service';
import {
  WEBHOOK_DUE_CHANNEL,
  WebhookStore,
  type AttemptOutcome,
  type ClaimedDelivery,
} from '../store/webhook-store.service';
import { parseWebhookUrl, resolveWebhookTarget, WebhookTargetRefused } from './webhook-address';
import { postWebhook, WEBHOOK_TIMEOUT_MS } from './webhook-request';
import { retryDelayMs } from './webhook-schedule';
import { webhookSigner } from './webhook-secret';

/** How often each process looks for due deliveries without being woken (retries, a dead process's claims). */
const POLL_MS = 2_000;
/**
 * How long a claim holds: the request's timeout and a margin. A process killed mid-attempt leaves
 * its claim to run out, then any process attempts again; a live one never overlaps a second attempt.
 */
export const WEBHOOK_LEASE_MS = WEBHOOK_TIMEOUT_MS + 5_000;
/** Attempts one process has under way at most, and claims at once. */
const MAX_IN_FLIGHT = 32;
const CLAIM_BATCH = 16;
/** The longest error text an attempt keeps. */
const ERROR_MAX_LENGTH = 300;
/**
 * Pruning (WebhookStore.prune): rows deleted per statement at most, and how long after a batch
 * that was not full the next is due. A full batch leaves the next one to the next pass (POLL_MS):
 * up to 1,000 rows every 2 s per process, far above the rate events are given up or attempted.
 */
const PRUNE_BATCH = 1_000;
const PRUNE_EVERY_MS = 60_000;

/**
 * Delivers the outbox (webhook_deliveries), on every process: woken by the outbox's notice and by a
 * poll, it claims due deliveries (SKIP LOCKED, under a lease), posts each signed as Standard Webhooks
 * says, and records the attempt — delivered, or due again after a growing wait. Each event is
 * attempted by one process at a time, at least once while 24 hours last. The same passes prune the
 * outbox, in bounded batches: what is given up, and attempts, after WEBHOOK_RETENTION_HOURS.
 */
@Injectable()
export class WebhookDeliverer implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(WebhookDeliverer.name);
  /** Whose claims are this process's (webhook_deliveries.lease_owner). */
  private readonly processId = randomUUID();
  private readonly inFlight = new Set<string>();
  private readonly stopped = new AbortController();
  private timer: NodeJS.Timeout | null = null;
  private unlisten: (() => void) | null = null;
  private passing = false;
  private again = false;
  /** When the next pruning is due (Date.now()); the first pass prunes. */
  private pruneDueAt = 0;
  /** While claims fail (the database is gone), polls wait longer between tries, up to 5 s. */
  private readonly retry = new Backoff(POLL_MS);
  private retryAt = 0;

  constructor(
    private readonly store: WebhookStore,
    private readonly notifications: PgNotifications,
    private readonly draining: Draining,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.unlisten = await this.notifications.listen(WEBHOOK_DUE_CHANNEL, () => this.wake());
    this.timer = setInterval(() => this.wake(), POLL_MS);
    this.timer.unref();
    this.wake();
  }

  /** Stops claiming, abandons the attempts under way and gives their claims up for another process. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopped.abort();
    if (this.timer) clearInterval(this.timer);
    this.unlisten?.();
    await this.store.releaseLeases(this.processId, [...this.inFlight]).catch(() => undefined);
  }

  /** Looks for due deliveries now (or right after the look under way). */
  private wake(): void {
    if (this.stopped.signal.aborted || this.draining.active || Date.now() < this.retryAt) return;
    if (this.passing) {
      this.again = true;
      return;
    }
    this.passing = true;
    void this.pass().finally(() => {
      this.passing = false;
      if (this.again) {
        this.again = false;
        this.wake();
      }
    });
  }

  /** Claims what is due, then prunes when that is due. Never throws: what failed is tried on a later pass. */
  private async pass(): Promise<void> {
    try {
      await this.claim();
      this.retry.succeeded();
      this.retryAt = 0;
    } catch (err) {
      this.retryAt = Date.now() + this.retry.failed();
      this.logger.warn(`could not claim webhook deliveries: ${(err as Error).message}`);
      return;
    }
    await this.prune();
  }

  private async claim(): Promise<void> {
    const room = Math.min(MAX_IN_FLIGHT - this.inFlight.size, CLAIM_BATCH);
    if (room <= 0) return;
    const claimed = await this.store.claimDue(this.processId, WEBHOOK_LEASE_MS, room);
    if (this.stopped.signal.aborted) {
      // Shut down while claiming: give these up too, for another process at once.
      await this.store.releaseLeases(
        this.processId,
        claimed.map((d) => d.id),
      );
      return;
    }
    // A full batch may have left more due: look again at once.
    if (claimed.length === room) this.again = true;
    for (const delivery of claimed) {
      this.inFlight.add(delivery.id);
      void this.attempt(delivery).finally(() => {
        this.inFlight.delete(delivery.id);
        if (claimed.length === room) this.wake();
      });
    }
  }

  /** One batch of pruning, when one is due. Never throws. */
  private async prune(): Promise<void> {
    if (Date.now() < this.pruneDueAt) return;
    try {
      const deleted = await this.store.prune(this.config.webhookRetentionHours, PRUNE_BATCH);
      this.pruneDueAt = deleted >= PRUNE_BATCH ? 0 : Date.now() + PRUNE_EVERY_MS;
    } catch (err) {
      this.logger.warn(`could not prune the webhook outbox: ${(err as Error).message}`);
    }
  }

  private async attempt(d: ClaimedDelivery): Promise<void> {
    const outcome = await this.send(d);
    if (this.stopped.signal.aborted) return;
    if (!outcome.delivered) this.logger.warn(`webhook ${d.webhookId} attempt ${d.attempt}: ${outcome.error}`);
    await this.store
      .recordAttempt(d, this.processId, outcome)
      .catch((err: Error) => this.logger.warn(`could not record a webhook attempt: ${err.message}`));
  }

  /** One attempt: resolve and check where the URL leads, then post there, signed. Never throws. */
  private async send(d: ClaimedDelivery): Promise<AttemptOutcome> {
    const failed = (status: number | null, error: string): AttemptOutcome => ({
      delivered: false,
      status,
      error: error.slice(0, ERROR_MAX_LENGTH),
      retryInMs: retryDelayMs(d.attempt),
    });
    const url = parseWebhookUrl(d.url);
    if (typeof url === 'string') return failed(null, url);
    // The body is the same on every attempt; the id too (the delivery's), the timestamp is this attempt's.
    const body = `{"type":${JSON.stringify(d.type)},"timestamp":${JSON.stringify(d.createdAt.toISOString())},"data":${d.data}}`;
    const now = new Date();
    try {
      const pinned = await resolveWebhookTarget(url, this.config.webhookAllowPrivate);
      const status = await postWebhook(
        url,
        pinned,
        {
          'content-type': 'application/json',
          'user-agent': 'Loopwright-Webhooks',
          'webhook-id': d.id,
          'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
          'webhook-signature': webhookSigner(d.secret).sign(d.id, now, body),
        },
        body,
        this.stopped.signal,
      );
      if (status >= 200 && status < 300) return { delivered: true, status, error: null, retryInMs: 0 };
      return failed(status, `answered ${status}`);
    } catch (err) {
      return failed(null, describe(err));
    }
  }
}

function describe(err: unknown): string {
  if (err instanceof WebhookTargetRefused) return `refused: ${err.message}`;
  const e = err as { code?: string; message?: string };
  return e.code ?? e.message ?? 'the request failed';
}
