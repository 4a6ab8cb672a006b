import type { WebhookAttemptRow, WebhookRow } from '../store/webhook-store.service';
import type { WebhookDeliveryResponse, WebhookResponse } from './dto/webhook.response';

/** A webhook as the contract shows it: never its secret (only the creation's answer adds it). */
export function webhookView(w: WebhookRow): WebhookResponse {
  return { id: w.id, url: w.url, events: w.events, createdAt: w.createdAt };
}

export function webhookAttemptView(a: WebhookAttemptRow): WebhookDeliveryResponse {
  return {
    webhookId: a.webhookId,
    type: a.type,
    attempt: a.attempt,
    status: a.status,
    error: a.error,
    at: a.at,
  };
}
