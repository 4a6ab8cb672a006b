import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import * as tls from 'node:tls';
import { BodyChunks } from '../../src/llm/body-chunks';
import { ReadTicks, type TickReader } from '../../src/llm/read-ticks';

/** A socket read as BodyChunks reads a body: paused while it waits for its tick, resumed when it comes. */
function reader(socket: Socket): TickReader {
  return { tickCame: () => socket.resume() };
}

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

  /**
   * Each client stops, gets a chunk (which waits in its buffer), then waits for its tick, in order:
   * a held client's first read is the one its tick gives it. Its reader, by client.
   */
  async function holdAll(ticks: ReadTicks): Promise<TickReader[]> {
    for (const client of clients) client.pause();
    for (const peer of peers) peer.write('chunk');
    while (clients.some((client) => client.readableLength === 0)) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    return clients.map((client) => {
      const r = reader(client);
      ticks.wait(r);
      return r;
    });
  }

  it('reads held sockets one tick after another, perTick at a time, in the order they were held', async () => {
    const ticks = new ReadTicks(1);
    await holdAll(ticks);
    const [first, second, third] = await ticksOfFirstReads();
    expect(second).toBeGreaterThan(first);
    expect(third).toBeGreaterThan(second);
  });

  it('lets a released socket read at once, ahead of those still waiting for their tick', async () => {
    const ticks = new ReadTicks(1);
    const readers = await holdAll(ticks);
    ticks.release(readers[2]);
    const [first, second, released] = await ticksOfFirstReads();
    expect(released).toBeLessThanOrEqual(first);
    expect(second).toBeGreaterThan(first);
  });

  it('leaves a destroyed socket alone', () => {
    const ticks = new ReadTicks(1);
    const r = reader(clients[0]);
    clients[0].destroy();
    expect(() => ticks.wait(r)).not.toThrow();
    expect(() => ticks.release(r)).not.toThrow();
  });
});

/**
 * Over TLS, what one read of the TCP socket decrypted comes in several pieces; a body that waits for
 * its tick after every delivery must lose and strand nothing.
 */
describe('ReadTicks over TLS', () => {
  const fixtures = join(__dirname, '..', 'fixtures', 'tls');
  const key = readFileSync(join(fixtures, 'localhost-key.pem'));
  const cert = readFileSync(join(fixtures, 'localhost-cert.pem'));

  it('loses nothing and stalls nowhere when the body waits for its tick after every read', async () => {
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
    const chunks = new BodyChunks(client, new ReadTicks(1));
    let received = '';
    let reads = 0;
    try {
      for (let read = await chunks.next(); read.done !== true; read = await chunks.next()) {
        reads++;
        received += Buffer.from(read.value).toString('utf8');
      }
      expect(received).toBe(pieces.join(''));
      expect(reads).toBeGreaterThan(1);
    } finally {
      client.destroy();
      server.close();
    }
  });
});
