import { readFileSync } from 'node:fs';
import type { Server as HttpServer } from 'node:http';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { LISTENING_SOCKETS } from '../../src/common/tuning';
import { listen } from '../../src/http/listen';
import { startApp, type TestApp } from '../support/app';

/** Listening TCP sockets on 127.0.0.1:`port`, from the kernel's own table. */
function listeningSockets(port: number): number {
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .filter((line) => {
      const cols = line.trim().split(/\s+/);
      return cols[1] === local && cols[3] === '0A'; // 0A: LISTEN
    }).length;
}

const linux = process.platform === 'linux';
if (!linux) console.log('listen.spec: SO_REUSEPORT sockets are checked on Linux only; skipped');

(linux ? describe : describe.skip)('listening on the port (src/http/listen.ts)', () => {
  let app: TestApp;
  let port: number;

  beforeAll(async () => {
    app = await startApp();
    port = Number(new URL(app.url).port);
  });
  afterAll(() => app.close());

  it(`listens through ${LISTENING_SOCKETS} sockets that share the port`, () => {
    expect(listeningSockets(port)).toBe(LISTENING_SOCKETS);
  });

  it('accepts a burst of connections in a few ticks of the event loop, not one tick each', async () => {
    const server: HttpServer = app.app.getHttpServer();
    const burst = 48;
    let accepted = 0;
    const onConnection = () => accepted++;
    server.on('connection', onConnection);
    const clients: Socket[] = [];
    try {
      // Every handshake completes in the kernel before the server's next tick: all wait to be accepted.
      for (let i = 0; i < burst; i++) clients.push(connect(port, '127.0.0.1').on('error', () => undefined));
      let ticks = 0;
      while (accepted < burst && ticks < 10 * burst) {
        await new Promise((resolve) => setImmediate(resolve));
        ticks++;
      }
      expect(accepted).toBe(burst);
      // One socket accepts one connection a tick (libuv#3696): that would be ≥ 48 ticks.
      expect(ticks).toBeLessThan(burst / 2);
    } finally {
      server.off('connection', onConnection);
      for (const c of clients) c.destroy();
    }
  });

  it('answers HTTP on connections any of the sockets accepted', async () => {
    const answers = await Promise.all(
      Array.from({ length: 32 }, () => fetch(`${app.url}/health/live`).then((r) => r.status)),
    );
    expect(answers).toEqual(Array.from({ length: 32 }, () => 200));
  });

  it('does not share a port that another socket already holds', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const held = (holder.address() as AddressInfo).port;
    try {
      await expect(listen(app.app, held, '127.0.0.1')).rejects.toMatchObject({ code: 'EADDRINUSE' });
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });
});
