import type { Server as HttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server } from 'node:net';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { LISTENING_SOCKETS } from '../common/tuning';

/**
 * Serves `app` on `port` (0: any free port) and `host` through LISTENING_SOCKETS sockets that share
 * the port (SO_REUSEPORT), every one handing its connections to the same HTTP server.
 *
 * Why: since Node 20, libuv accepts one connection per listening socket per tick of the event loop
 * (libuv#3696). A tick of a server busy with a thousand streams takes tens of milliseconds, so with one
 * socket new connections got about 30 accepts a second: 1,000 clients arriving over 5 s waited up to
 * 13 s in the kernel's queue before their run started, and the queue overflowed into SYN retries. The
 * kernel spreads new connections over the sockets, so each tick accepts up to one per socket.
 *
 * The port is first bound alone, so a port another process holds still fails with EADDRINUSE instead
 * of being shared with it. Where the platform cannot share a port (or Node is older than 22.12), the
 * server keeps the one socket it has. The extra sockets stop taking connections as soon as the server
 * stops listening, and close with it.
 */
export async function listen(app: NestFastifyApplication, port: number, host: string): Promise<void> {
  const free = await bindAlone(port, host);
  // reusePort is a node:net listen option that Fastify passes through (its types do not list it).
  const options: { port: number; host: string; reusePort: boolean } = { port: free, host, reusePort: true };
  await app.listen(options);
  const server: HttpServer = app.getHttpServer();
  const bound = server.address() as AddressInfo;
  const extra: Server[] = [];
  for (let i = 1; i < LISTENING_SOCKETS; i++) {
    const socket = await shareSocket(server, bound);
    if (socket === null) break;
    extra.push(socket);
  }
  server.once('close', () => {
    for (const socket of extra) socket.close();
  });
}

/**
 * Throws what listening on `port` would throw (EADDRINUSE, EACCES), before anything else starts:
 * start-up says so in one line instead of after opening the database.
 */
export async function assertCanListen(port: number, host: string): Promise<void> {
  await bindAlone(port, host);
}

/** Binds `port` without sharing it, then lets it go: the port (the one chosen, for 0). */
async function bindAlone(port: number, host: string): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen({ port, host, exclusive: true }, resolve);
  });
  const chosen = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return chosen;
}

/** One more socket on the server's address and port, or null when the port cannot be shared. */
async function shareSocket(server: HttpServer, bound: AddressInfo): Promise<Server | null> {
  // As node:http makes its own server: half-open sockets (HTTP ends them itself), no Nagle delay.
  const socket = createServer({ allowHalfOpen: true, noDelay: true }, (connection) => {
    if (server.listening) server.emit('connection', connection);
    else connection.destroy();
  });
  const listening = await new Promise<boolean>((resolve) => {
    socket.once('error', () => resolve(false));
    socket.listen({ port: bound.port, host: bound.address, reusePort: true }, () => resolve(true));
  });
  if (listening) return socket;
  socket.close();
  return null;
}
