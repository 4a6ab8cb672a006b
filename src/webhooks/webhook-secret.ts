import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** Standard Webhooks' prefix of a base64 secret. */
const PREFIX = 'whsec_';
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** The longest secret taken. */
export const WEBHOOK_SECRET_MAX_LENGTH = 1024;

/** A new secret: `whsec_` and base64 of 24 random bytes. */
export function generateWebhookSecret(): string {
  return PREFIX + randomBytes(24).toString('base64');
}

/** Why `secret` cannot be a webhook's secret, or null: a `whsec_` one must be base64 after the prefix. */
export function webhookSecretProblem(secret: string): string | null {
  if (secret.length === 0 || secret.length > WEBHOOK_SECRET_MAX_LENGTH) {
    return `secret must be 1–${WEBHOOK_SECRET_MAX_LENGTH} characters`;
  }
  if (secret.startsWith(PREFIX) && !BASE64.test(secret.slice(PREFIX.length))) {
    return 'a secret starting with whsec_ must be base64 after it';
  }
  return null;
}

/** The signer of a secret: a `whsec_` secret is the base64 key after it, any other its UTF-8 bytes. */
export function webhookSigner(secret: string): Webhook {
  return secret.startsWith(PREFIX)
    ? new Webhook(secret)
    : new Webhook(new Uint8Array(Buffer.from(secret, 'utf8')), { format: 'raw' });
}
