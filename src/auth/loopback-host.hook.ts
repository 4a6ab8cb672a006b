import { MisdirectedException } from '@nestjs/common';
import type { onRequestHookHandler } from 'fastify';
import { isLoopbackHost } from '../config/app-config';

// A host name or a bracketed IPv6 literal, then an optional port; nothing else (no userinfo, no path).
const HOST_HEADER = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]@/?#\s]+)(:\d{1,5})?$/;

/**
 * Without API keys anything that reaches the port may drive the agent, and a web page can reach a
 * loopback port through a DNS name it controls (DNS rebinding). Such a request carries the page's
 * host name, so only requests addressed to a loopback name are answered.
 */
export function loopbackHostHook(): onRequestHookHandler {
  return (request, _reply, done) => {
    if (isLoopbackHostHeader(request.headers.host)) return done();
    done(
      new MisdirectedException(
        'Misdirected Request: this server without API_KEYS only answers requests addressed to a loopback name',
        { description: 'Misdirected Request' },
      ),
    );
  };
}

export function isLoopbackHostHeader(host: string | undefined): boolean {
  const match = host === undefined ? null : HOST_HEADER.exec(host);
  return match !== null && isLoopbackHost(match[1]);
}
