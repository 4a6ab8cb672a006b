import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One POST the receiver got: its Standard Webhooks headers and its body as sent. */
export interface ReceivedWebhook {
  id: string;
  timestamp: string;
  signature: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * How the receiver answers one request: a status, a redirect elsewhere (302), or never (the request
 * hangs until the test ends).
 */
export type ReceiverAnswer = number | { redirect: string } | 'hang';

/**
 * A webhook receiver on loopback, as a team's backend would run one: it records every request and
 * answers each with the next scripted answer (200 once the script is spent).
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  private readonly answers: ReceiverAnswer[] = [];
  private readonly waiting: (() => void)[] = [];
  private readonly hung: ServerResponse[] = [];

  private constructor(private readonly server: Server) {}

  static async start(): Promise<WebhookReceiver> {
    const server = createServer();
    const receiver = new WebhookReceiver(server);
    server.on('request', (req, res) => void receiver.handle(req, res));
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    return receiver;
  }

  /** http://127.0.0.1:<port>/hook */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Answers the next requests with these, in order. */
  answer(...answers: ReceiverAnswer[]): void {
    this.answers.push(...answers);
  }

  /** Waits until `count` requests have arrived and answers them. */
  async nth(count: number, timeoutMs = 30_000): Promise<ReceivedWebhook[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.received.length < count) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`the receiver got ${this.received.length} of ${count} requests`);
      await new Promise<void>((done) => {
        const timer = setTimeout(done, left);
        this.waiting.push(() => {
          clearTimeout(timer);
          done();
        });
      });
    }
    return this.received.slice(0, count);
  }

  async close(): Promise<void> {
    for (const res of this.hung) res.destroy();
    this.server.closeAllConnections();
    await new Promise((done) => this.server.close(done));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = Object.fromEntries(
      Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : (v ?? '')]),
    );
    this.received.push({
      id: headers['webhook-id'],
      timestamp: headers['webhook-timestamp'],
      signature: headers['webhook-signature'],
      headers,
      body: Buffer.concat(chunks).toString('utf8'),
    });
    for (const wake of this.waiting.splice(0)) wake();
    const answer = this.answers.shift() ?? 200;
    if (answer === 'hang') {
      this.hung.push(res);
      return;
    }
    if (typeof answer === 'object') {
      res.writeHead(302, { location: answer.redirect }).end();
      return;
    }
    res.statusCode = answer;
    res.end('ok');
  }
}
