import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP proxy in front of the app whose open connections a test can cut, as a dropped network
 * would: the browser's streams fail mid-run while the server carries on.
 */
export class CuttableProxy {
  private constructor(
    private readonly server: Server,
    private readonly sockets: Set<Socket>,
    readonly url: string,
  ) {}

  static async start(targetPort: number): Promise<CuttableProxy> {
    const sockets = new Set<Socket>();
    const server = createServer((client) => {
      joinSockets(client, connect(targetPort, '127.0.0.1'), sockets);
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const { port } = server.address() as AddressInfo;
    return new CuttableProxy(server, sockets, `http://127.0.0.1:${port}`);
  }

  /** Destroys every open connection; new ones go through again. */
  cutAll(): number {
    const count = this.sockets.size;
    for (const socket of this.sockets) socket.destroy();
    return count;
  }

  async close(): Promise<void> {
    this.cutAll();
    await new Promise<void>((done) => this.server.close(() => done()));
  }
}

/** Pipes `client` and `upstream` both ways, each tracked in `sockets` while open, each ending with the other. */
export function joinSockets(client: Socket, upstream: Socket, sockets: Set<Socket>): void {
  for (const socket of [client, upstream]) {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  }
  client.pipe(upstream).pipe(client);
  client.on('close', () => upstream.destroy());
  upstream.on('close', () => client.destroy());
}
