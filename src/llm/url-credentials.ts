/**
 * A base URL's credentials (`https://user:pass@host`) sent as node:http sends them —
 * `Authorization: Basic`, unless the request carries its own authorization — and taken out of the
 * URL, which fetch refuses to send ("Request cannot be constructed from a URL that includes
 * credentials"). Without this, a base URL that works for the `openai` provider (node:http) fails
 * for the SDKs that use fetch.
 */
export function withoutUrlCredentials(href: string | URL, headers: Headers): URL {
  const url = new URL(href);
  if (url.username === '' && url.password === '') return url;
  if (!headers.has('authorization')) {
    const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    headers.set('authorization', `Basic ${Buffer.from(credentials).toString('base64')}`);
  }
  url.username = '';
  url.password = '';
  return url;
}

/** fetch, with the credentials of a URL moved into a header (withoutUrlCredentials). */
export const fetchWithUrlCredentials: typeof fetch = (input, init = {}) => {
  if (input instanceof Request) return fetch(input, init);
  const headers = new Headers(init.headers);
  const url = withoutUrlCredentials(input, headers);
  return fetch(url, { ...init, headers });
};
