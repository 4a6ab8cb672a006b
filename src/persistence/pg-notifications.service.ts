import { Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { Client } from 'pg';
import { Backoff } from '../common/backoff';

type Listener = (payload: string) => void;

/**
 * PostgreSQL LISTEN/NOTIFY as a tiny pub/sub between server processes: no broker beside the
 * database. One dedicated connection listens; it reconnects after a drop.
 */
export class PgNotifications implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(PgNotifications.name);
  private readonly listeners = new Map<string, Set<Listener>>();
  private client: Client | null = null;
  private closed = false;
  private reconnecting = false;
  /** Reconnects a second apart, then further apart while the database stays gone (up to 5 s). */
  private readonly retry = new Backoff(1000);

  constructor(private readonly url: string) {}

  async onModuleInit(): Promise<void> {
    await this.connect();
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    await this.client?.end().catch(() => undefined);
  }

  /** Registers a listener; the returned function removes it. Channels must be plain identifiers. */
  async listen(channel: string, listener: Listener): Promise<() => void> {
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
      await this.client?.query(`LISTEN ${channel}`);
    }
    set.add(listener);
    return () => set.delete(listener);
  }

  private async connect(): Promise<void> {
    const client = new Client({ connectionString: this.url, application_name: 'loopwright-listen' });
    client.on('notification', (n) => {
      for (const listener of this.listeners.get(n.channel) ?? []) listener(n.payload ?? '');
    });
    client.on('error', (err) => {
      this.logger.warn(`notification connection lost: ${err.message}`);
      this.reconnectSoon();
    });
    client.on('end', () => this.reconnectSoon());
    await client.connect();
    if (this.closed) {
      await client.end();
      return;
    }
    for (const channel of this.listeners.keys()) await client.query(`LISTEN ${channel}`);
    this.client = client;
  }

  private reconnectSoon(): void {
    if (this.closed || this.reconnecting) return;
    this.reconnecting = true;
    this.client = null;
    const attempt = (): void => {
      if (this.closed) return;
      this.connect().then(
        () => {
          this.reconnecting = false;
          this.retry.succeeded();
        },
        (err: Error) => {
          this.logger.warn(`could not reconnect for notifications: ${err.message}`);
          setTimeout(attempt, this.retry.failed()).unref();
        },
      );
    };
    setTimeout(attempt, 200).unref();
  }
}
