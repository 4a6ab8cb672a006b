import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import * as tls from 'node:tls';
import { ReadTicks } from '../../src/llm/read-ticks';

/**
 * Real sockets on the loopback: what is written to one is in its peer's kernel buffer when the
 * write returns, so a socket that reads at all reads it in the next poll of the event loop.
 */
describe('ReadTicks', () => {
  let server: Server;
  const peers: Socket[] = [];
  const clients: Socket[] = [];

  beforeEach(async () => {
    server = createServer((socket) => peers.push(socket));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    for (let i = 0; i < 3; i++) {
      const client = connect(port, '127.0.0.1');
      clients.push(client);
      await once(client, 'connect');
    }
    while (peers.length < clients.length) await new Promise((resolve) => setImmediate(resolve));
  });

  afterEach(async () => {
    for (const socket of [...clients, ...peers]) socket.destroy();
    clients.length = 0;
    peers.length = 0;
    server.close();
    await once(server, 'close');
  });

  /** The tick of the event loop each client's first read came in, counted from now. */
  async function ticksOfFirstReads(): Promise<number[]> {
    let tick = 0;
    let counting = true;
    const count = () => {
      tick++;
      if (counting) setImmediate(count);
    };
    setImmediate(count);
    const reads = clients.map((client) => once(client, 'data').then(() => tick));
    try {
      return await Promise.all(reads);
    } finally {
      counting = false;
    }
  }

  it('reads held sockets one tick after another, perTick at a time, in the order they were held', async () => {
    const ticks = new ReadTicks(1);
    for (const client of clients) ticks.hold(client);
    for (const peer of peers) peer.write('chunk');
    const [first, second, third] = await ticksOfFirstReads();
    expect(second).toBeGreaterThan(first);
    expect(third).toBeGreaterThan(second);
  });

  it('lets a released socket read at once, ahead of those still waiting for their tick', async () => {
    const ticks = new ReadTicks(1);
    for (const client of clients) ticks.hold(client);
    ticks.release(clients[2]);
    for (const peer of peers) peer.write('chunk');
    const [first, second, released] = await ticksOfFirstReads();
    expect(released).toBeLessThanOrEqual(first);
    expect(second).toBeGreaterThan(first);
  });

  it('leaves a destroyed socket alone', () => {
    const ticks = new ReadTicks(1);
    clients[0].destroy();
    expect(() => ticks.hold(clients[0])).not.toThrow();
    expect(() => ticks.release(clients[0])).not.toThrow();
  });
});

/**
 * Over TLS the handle is Node's TLSWrap, which stops and starts the TCP socket beneath it; what one
 * read decrypted is handed over whole before the stop counts, so a hold must lose and strand nothing.
 */
describe('ReadTicks over TLS', () => {
  const fixtures = join(__dirname, '..', 'fixtures', 'tls');
  const key = readFileSync(join(fixtures, 'localhost-key.pem'));
  const cert = readFileSync(join(fixtures, 'localhost-cert.pem'));

  it('loses nothing and stalls nowhere when the socket is held after every read', async () => {
    const pieces = Array.from({ length: 2000 }, (_, i) => `${String(i).padStart(4, '0')}:${'x'.repeat(95)}`);
    // All at once: a read of the TCP socket brings many TLS records, decrypted in several pieces.
    const server = tls.createServer({ key, cert }, (peer) => {
      for (const piece of pieces) peer.write(piece);
      peer.end();
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const client = tls.connect({ port, host: '127.0.0.1', ca: cert, servername: 'localhost' });
    // A socket left stopped would wait forever: it fails the test instead.
    client.setTimeout(5000, () => client.destroy(new Error('the held socket never read again')));
    const ticks = new ReadTicks(1);
    let received = '';
    let reads = 0;
    client.setEncoding('utf8');
    client.on('data', (chunk: string) => {
      reads++;
      received += chunk;
      ticks.hold(client);
    });
    try {
      await once(client, 'end');
      expect(received).toBe(pieces.join(''));
      expect(reads).toBeGreaterThan(1);
    } finally {
      client.destroy();
      server.close();
    }
  });
});
