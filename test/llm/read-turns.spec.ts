import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import * as tls from 'node:tls';
import { ReadTurns } from '../../src/llm/read-turns';

/**
 * Real sockets on the loopback: what is written to one is in its peer's kernel buffer when the
 * write returns, so a socket that reads at all reads it in the next poll of the event loop.
 */
describe('ReadTurns', () => {
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

  /** The turn of the event loop each client's first read came in, counted from now. */
  async function turnsOfFirstReads(): Promise<number[]> {
    let turn = 0;
    let counting = true;
    const tick = () => {
      turn++;
      if (counting) setImmediate(tick);
    };
    setImmediate(tick);
    const reads = clients.map((client) => once(client, 'data').then(() => turn));
    try {
      return await Promise.all(reads);
    } finally {
      counting = false;
    }
  }

  it('reads held sockets one turn after another, perTurn at a time, in the order they were held', async () => {
    const turns = new ReadTurns(1);
    for (const client of clients) turns.hold(client);
    for (const peer of peers) peer.write('chunk');
    const [first, second, third] = await turnsOfFirstReads();
    expect(second).toBeGreaterThan(first);
    expect(third).toBeGreaterThan(second);
  });

  it('lets a released socket read at once, ahead of those still waiting for their turn', async () => {
    const turns = new ReadTurns(1);
    for (const client of clients) turns.hold(client);
    turns.release(clients[2]);
    for (const peer of peers) peer.write('chunk');
    const [first, second, released] = await turnsOfFirstReads();
    expect(released).toBeLessThanOrEqual(first);
    expect(second).toBeGreaterThan(first);
  });

  it('leaves a destroyed socket alone', () => {
    const turns = new ReadTurns(1);
    clients[0].destroy();
    expect(() => turns.hold(clients[0])).not.toThrow();
    expect(() => turns.release(clients[0])).not.toThrow();
  });
});

/**
 * Over TLS the handle is Node's TLSWrap, which stops and starts the TCP socket beneath it; what one
 * read decrypted is handed over whole before the stop counts, so a hold must lose and strand nothing.
 */
describe('ReadTurns over TLS', () => {
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
    const turns = new ReadTurns(1);
    let received = '';
    let reads = 0;
    client.setEncoding('utf8');
    client.on('data', (chunk: string) => {
      reads++;
      received += chunk;
      turns.hold(client);
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
