import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { DomainError, ErrorCode } from '../common/domain-error';
import {
  MAX_WEBHOOKS_PER_KEY,
  WebhookStore,
  type WebhookAttemptRow,
  type WebhookRow,
} from '../store/webhook-store.service';
import type { CreateWebhookDto } from './dto/create-webhook.dto';
import { parseWebhookUrl, resolveWebhookTarget, WebhookTargetRefused } from './webhook-address';
import { generateWebhookSecret, webhookSecretProblem } from './webhook-secret';

/** The most attempts `GET /v1/webhooks/:id/deliveries` lists. */
const ATTEMPTS_LISTED = 100;

/** A key's webhooks: created (the URL checked where it leads), listed, deleted, their attempts. */
@Injectable()
export class Webhooks {
  constructor(
    private readonly store: WebhookStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** A new webhook with its secret (the only answer that shows it). */
  async create(
    owner: string,
    endUser: string | null,
    dto: CreateWebhookDto,
  ): Promise<WebhookRow & { secret: string }> {
    const url = parseWebhookUrl(dto.url);
    if (typeof url === 'string') throw invalid(url);
    const secret = dto.secret ?? generateWebhookSecret();
    const problem = webhookSecretProblem(secret);
    if (problem !== null) throw invalid(problem);
    try {
      await resolveWebhookTarget(url, this.config.webhookAllowPrivate);
    } catch (err) {
      if (err instanceof WebhookTargetRefused) throw invalid(`url refused: ${err.message}`);
      throw err;
    }
    const events = dto.events.includes('*') ? ['*'] : [...new Set(dto.events)];
    const row = await this.store.create({ id: randomUUID(), owner, endUser, url: url.href, events, secret });
    if (row === null) throw invalid(`a key may have at most ${MAX_WEBHOOKS_PER_KEY} webhooks`);
    return { ...row, secret };
  }

  list(owner: string, endUser: string | null): Promise<WebhookRow[]> {
    return this.store.list(owner, endUser);
  }

  async delete(owner: string, endUser: string | null, id: string): Promise<void> {
    if (!(await this.store.delete(owner, endUser, id))) throw notFound(id);
  }

  async attempts(owner: string, endUser: string | null, id: string): Promise<WebhookAttemptRow[]> {
    const rows = await this.store.attempts(owner, endUser, id, ATTEMPTS_LISTED);
    if (rows === null) throw notFound(id);
    return rows;
  }
}

function invalid(message: string): DomainError {
  return new DomainError(ErrorCode.InvalidRequest, message);
}

function notFound(id: string): DomainError {
  return new DomainError(ErrorCode.WebhookNotFound, `Webhook ${id} not found`);
}
