import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pinoHttp, type Options } from 'pino-http';
import { loggerParams } from '../../src/observability/logger-params';

/** The request log lines pino-http writes with the application's options. */
async function logLinesFor(path: string, init: RequestInit): Promise<Record<string, unknown>[]> {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const options = loggerParams({ logLevel: 'info' }).pinoHttp as Options;
  const log = pinoHttp(options, sink);
  const server: Server = createServer((req, res) => {
    log(req, res);
    req.resume();
    req.on('end', () => res.end('{}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    await (await fetch(`http://127.0.0.1:${port}${path}`, init)).text();
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
  return lines.map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('request logs', () => {
  it('log method, url and status, never the key, cookies or the body', async () => {
    const lines = await logLinesFor('/v1/chat', {
      method: 'POST',
      headers: {
        authorization: 'Bearer top-secret-key',
        cookie: 'session=also-secret',
        'content-type': 'application/json',
      },
      body: JSON.stringify({ prompt: 'my private prompt' }),
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      msg: 'request completed',
      req: { method: 'POST', url: '/v1/chat' },
      res: { statusCode: 200 },
    });
    const text = JSON.stringify(lines);
    for (const secret of ['top-secret-key', 'also-secret', 'my private prompt'])
      expect(text).not.toContain(secret);
  });

  it('log a stream token in the query string as [redacted]', async () => {
    const lines = await logLinesFor('/v1/runs/0b6e/events?after=3&token=lwst_secret-token&x=1', {});
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ req: { url: '/v1/runs/0b6e/events?after=3&token=[redacted]&x=1' } });
    expect(JSON.stringify(lines)).not.toContain('secret-token');
  });

  it('skip probes and scrapes', async () => {
    expect(await logLinesFor('/health/live', {})).toEqual([]);
    expect(await logLinesFor('/metrics', {})).toEqual([]);
    expect(await logLinesFor('/healthy-looking-route', {})).toHaveLength(1);
  });
});
