import type { AppConfig } from '../../config/app-config';

function noop(): void {}

/**
 * What every provider's official SDK client is given besides its key and base URL: the retries of
 * LLM_MAX_RETRIES, LLM_HEADERS on every request, and no console logging (the SDKs log to the
 * console by default, e.g. a malformed chunk; the server's logs are its own).
 */
export function sdkClientOptions(config: AppConfig) {
  return {
    maxRetries: config.llm.maxRetries,
    defaultHeaders: config.llm.headers,
    logger: { error: noop, warn: noop, info: noop, debug: noop },
    logLevel: 'off' as const,
  };
}
