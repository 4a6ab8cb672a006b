import type { AppConfig } from '../../config/app-config';
import { fetchWithUrlCredentials } from '../url-credentials';

function noop(): void {}

/**
 * What every provider's official SDK client is given besides its key and base URL: no retries of
 * its own (ModelProviders retries every provider alike: retry-policy.ts), LLM_HEADERS on every request, no console logging (the SDKs log to the
 * console by default, e.g. a malformed chunk; the server's logs are its own), and a fetch that
 * sends a base URL's credentials instead of refusing them.
 */
export function sdkClientOptions(config: AppConfig) {
  return {
    maxRetries: 0,
    defaultHeaders: config.llm.headers,
    logger: { error: noop, warn: noop, info: noop, debug: noop },
    logLevel: 'off' as const,
    fetch: fetchWithUrlCredentials,
  };
}
