import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import OpenAI from 'openai';
import { createNodeFetch, rawBody } from '../../src/llm/node-fetch';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/**
 * nodeFetch against a real local server that starts an SSE answer and keeps it open, as a model
 * does while it streams.
 */
describe('nodeFetch', () => {
  let server: Server;
  let url: string;
  const open: ServerResponse[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.url?.endsWith('/models')) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              object: 'list',
              data: [{ id: 'm-1', object: 'model', created: 0, owned_by: 'x' }],
            }),
          );
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: {}\n\n');
        open.push(res);
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });

  afterAll(async () => {
    for (const res of open) res.end();
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  });

  it('keeps nothing of the request body alive while the answer streams', async () => {
    const fetch = createNodeFetch();
    const sent = async () => {
      const body = new Uint8Array(256 * 1024).fill(0x20);
      const response = await fetch(url, { method: 'POST', body });
      return { response, body: new WeakRef(body) };
    };
    const { response, body } = await sent();
    expect(rawBody(response)?.readableEnded).toBe(false);
    // Two collections and a turn between them: what only a finalizer would let go is gone too.
    gc();
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    expect(body.deref()).toBeUndefined();
    rawBody(response)?.destroy();
  });

  it('leaves a streamed answer raw, and gives any other 2xx answer its body as fetch does (the SDK reads it)', async () => {
    const fetch = createNodeFetch();
    const streamed = await fetch(url, { method: 'POST', body: '{}' });
    expect(streamed.body).toBeNull();
    expect(rawBody(streamed)?.readableEnded).toBe(false);
    rawBody(streamed)?.destroy();

    const json = await fetch(`${url}v1/models`);
    expect(rawBody(json)).toBeUndefined();
    expect(await json.json()).toMatchObject({ data: [{ id: 'm-1' }] });

    // A non-streaming call of the official SDK through it.
    const client = new OpenAI({ apiKey: 'k', baseURL: `${url}v1`, fetch, maxRetries: 0 });
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(['m-1']);
  });

  it('rejects, as fetch does, a body it cannot send and a signal already aborted', async () => {
    const fetch = createNodeFetch();
    await expect(fetch(url, { method: 'POST', body: new URLSearchParams({ a: '1' }) })).rejects.toThrow(
      'nodeFetch sends string and byte bodies only',
    );
    await expect(fetch(url, { method: 'POST', signal: AbortSignal.abort() })).rejects.toMatchObject({
      name: 'AbortError',
    });
  });
});
