import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Finds the name of the key a presented secret belongs to. Both sides are hashed to equal-length
 * digests and every key is compared, so neither the length of a secret nor where it differs, nor
 * which key matched, shows in the time taken.
 */
export class ApiKeyVerifier {
  private readonly keys: readonly { digest: Buffer; name: string }[];

  constructor(secretToName: ReadonlyMap<string, string>) {
    this.keys = [...secretToName].map(([secret, name]) => ({ digest: sha256(secret), name }));
  }

  /** The key's name, or null when the secret matches no key. */
  nameFor(presented: string): string | null {
    const digest = sha256(presented);
    let match: string | null = null;
    for (const key of this.keys) {
      if (timingSafeEqual(digest, key.digest) && match === null) match = key.name;
    }
    return match;
  }
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
