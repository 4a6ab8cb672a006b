import { shownText, shownUrl } from '../config/secret-variables';
import { withoutUrlCredentials } from './url-credentials';

/** One model upstream start-up checks: where it is and the key it is called with. */
export interface UpstreamToCheck {
  provider: string;
  baseUrl: string;
  /** Sent as a bearer token, never logged. */
  apiKey: string | null;
  headers?: Readonly<Record<string, string>>;
}

/** How long start-up waits for an upstream's answer before it says it could not reach it. */
const CHECK_TIMEOUT_MS = 3000;

/**
 * Whether a model upstream answers and takes the key, asked once at start-up with `GET {baseUrl}/models`
 * (every OpenAI-compatible server has it; a server without it answers 404, which says it is there).
 * Null when all is well, else a sentence for a warning; it never throws, and no secret appears in
 * it (not the key, not the base URL's credentials). Start-up does not wait for it: a wrong base URL
 * or key is said at once instead of at the first prompt, and a server that is down now may be up by then.
 */
export async function checkUpstream(u: UpstreamToCheck): Promise<string | null> {
  const where = `the ${u.provider} upstream at ${shownUrl(u.baseUrl)}`;
  try {
    const headers = new Headers(u.headers);
    if (u.apiKey) headers.set('authorization', `Bearer ${u.apiKey}`);
    // As the providers send them: the base URL's credentials, unless a key is sent.
    const url = withoutUrlCredentials(u.baseUrl, headers);
    url.pathname = `${url.pathname.replace(/\/+$/, '')}/models`;
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(CHECK_TIMEOUT_MS) });
    await res.body?.cancel();
    if (res.status === 401 || res.status === 403) {
      return `${where} refused the API key (HTTP ${res.status}): model calls will fail until the key is right`;
    }
    if (res.status >= 500) {
      return `${where} answered HTTP ${res.status} to GET /models: it may be failing`;
    }
    return null;
  } catch (err) {
    const cause =
      err instanceof Error && err.name === 'TimeoutError'
        ? `no answer within ${CHECK_TIMEOUT_MS / 1000} s`
        : shownText(reason(err));
    return `${where} could not be reached (${cause}): check the base URL; model calls will fail until it answers`;
  }
}

function reason(err: unknown): string {
  const cause =
    err instanceof Error ? (err.cause as { code?: string; message?: string } | undefined) : undefined;
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}
