import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/** The longest webhook URL taken. */
export const WEBHOOK_URL_MAX_LENGTH = 2048;

/** How long a name's resolution may take before the attempt (or the creation) is refused. */
const RESOLVE_TIMEOUT_MS = 5_000;

/**
 * Where a webhook may not reach unless WEBHOOK_ALLOW_PRIVATE=true: this host and its network
 * neighbours (loopback, private, CGNAT, link-local, unspecified, multicast and reserved ranges),
 * and the IPv6 forms that lead there (IPv4-mapped addresses are checked as the IPv4 address they
 * map — BlockList does that —, IPv4-compatible, NAT64 and 6to4 forms refused whole).
 */
const NOT_PUBLIC = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  NOT_PUBLIC.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 96],
  ['64:ff9b::', 96],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  NOT_PUBLIC.addSubnet(net, prefix, 'ipv6');
}

/** A webhook's target refused before any byte is sent to it. */
export class WebhookTargetRefused extends Error {}

/** An address a request goes to: the one resolved and checked, pinned for the connection. */
export interface PinnedAddress {
  address: string;
  family: 4 | 6;
}

/** Whether `address` (an IP literal) is a public one. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return !NOT_PUBLIC.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** The URL a webhook posts to, or why it cannot be one (http(s), no credentials, bounded). */
export function parseWebhookUrl(raw: string): URL | string {
  if (raw.length > WEBHOOK_URL_MAX_LENGTH) return `url must be at most ${WEBHOOK_URL_MAX_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'url must be an absolute http:// or https:// URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'url must be http:// or https://';
  if (url.username !== '' || url.password !== '') return 'url must not carry credentials (user:password@)';
  if (url.hostname === '') return 'url must name a host';
  return url;
}

/**
 * The address to send to: the URL's literal address, or every address its name resolves to now —
 * all public unless `allowPrivate` (a name with one private address among public ones is refused:
 * which of them a connection would use is not ours to choose). The caller connects to the answer
 * and nothing else, so a name that resolves elsewhere a moment later changes nothing.
 */
export async function resolveWebhookTarget(url: URL, allowPrivate: boolean): Promise<PinnedAddress> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const literal = isIP(host);
  const addresses: PinnedAddress[] =
    literal !== 0 ? [{ address: host, family: literal as 4 | 6 }] : await resolveName(host);
  if (!allowPrivate) {
    const refused = addresses.find((a) => !isPublicAddress(a.address));
    if (refused) {
      throw new WebhookTargetRefused(
        literal !== 0
          ? `${host} is a loopback, private or link-local address`
          : `${host} resolves to ${refused.address}, a loopback, private or link-local address`,
      );
    }
  }
  return addresses[0];
}

async function resolveName(host: string): Promise<PinnedAddress[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, fail) => {
    timer = setTimeout(
      () => fail(new WebhookTargetRefused(`${host} did not resolve in time`)),
      RESOLVE_TIMEOUT_MS,
    );
  });
  try {
    const found = await Promise.race([lookup(host, { all: true, verbatim: true }), timeout]);
    if (found.length === 0) throw new WebhookTargetRefused(`${host} does not resolve`);
    return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
  } catch (err) {
    if (err instanceof WebhookTargetRefused) throw err;
    throw new WebhookTargetRefused(`${host} does not resolve`);
  } finally {
    clearTimeout(timer);
  }
}
