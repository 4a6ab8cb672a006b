import { joinSockets } from './cuttable-proxy';
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP proxy in front of a test database that a test can take down, as a database that
 * disappears: `down()` drops every open connection and closes each new one at once (counting
 * them: every connection attempt of the app while the database is gone), `up()` brings it back.
 */
export class DatabaseOutage {
  private isDown = false;
  private attemptsWhileDown = 0;

  private constructor(
    private readonly server: Server,
    private readonly sockets: Set<Socket>,
    /** The database's URL through the proxy. */
    readonly url: string,
  ) {}

  static async start(databaseUrl: string): Promise<DatabaseOutage> {
    const target = new URL(databaseUrl);
    const sockets = new Set<Socket>();
    let outage: DatabaseOutage | null = null;
    const server = createServer((client) => {
      if (outage?.isDown) {
        outage.attemptsWhileDown++;
        client.destroy();
        return;
      }
      joinSockets(client, connect(Number(target.port), target.hostname), sockets);
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const url = new URL(databaseUrl);
    url.hostname = '127.0.0.1';
    url.port = String((server.address() as AddressInfo).port);
    outage = new DatabaseOutage(server, sockets, url.toString());
    return outage;
  }

  /** The database is gone: open connections drop, new ones are closed as they come. */
  down(): void {
    this.isDown = true;
    for (const socket of this.sockets) socket.destroy();
  }

  up(): void {
    this.isDown = false;
  }

  /** Connections attempted while the database was down, so far. */
  get attempts(): number {
    return this.attemptsWhileDown;
  }

  async close(): Promise<void> {
    this.down();
    await new Promise<void>((done) => this.server.close(() => done()));
  }
}
