import { shownText, shownUrl } from '../config/secret-variables';

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
    const { url, basicAuth } = modelsRequest(u.baseUrl);
    const headers: Record<string, string> = { ...u.headers };
    // As node:http sends a URL's credentials (the providers' requests): Basic, unless a key is sent.
    if (u.apiKey) headers.authorization = `Bearer ${u.apiKey}`;
    else if (basicAuth !== null) headers.authorization = basicAuth;
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

/** `GET {baseUrl}/models`; fetch refuses a URL with credentials, so they go in a header instead. */
function modelsRequest(baseUrl: string): { url: URL; basicAuth: string | null } {
  const url = new URL(baseUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/models`;
  if (url.username === '' && url.password === '') return { url, basicAuth: null };
  const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  url.username = '';
  url.password = '';
  return { url, basicAuth: `Basic ${Buffer.from(credentials).toString('base64')}` };
}

function reason(err: unknown): string {
  const cause =
    err instanceof Error ? (err.cause as { code?: string; message?: string } | undefined) : undefined;
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}
