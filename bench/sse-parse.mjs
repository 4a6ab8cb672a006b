// CPU of reading one streamed answer (200 text deltas, shaped like api.openai.com's, one event per
// network chunk) into ModelStreamEvents: the openai SDK's stream iterator versus our single-pass
// SseParser, both feeding the same ChunkNormalizer. After a build: node bench/sse-parse.mjs
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { Stream } = require('openai/core/streaming.js');
const { SseParser } = require('../dist/llm/sse-parser.js');
const { ChunkNormalizer } = require('../dist/llm/chunk-normalizer.js');

const frames = [];
for (let i = 0; i < 200; i++) {
  frames.push(
    `data: {"id":"chatcmpl-x","object":"chat.completion.chunk","created":1,"model":"gpt-4o","system_fingerprint":"fp","choices":[{"index":0,"delta":{"content":" word${i}"},"logprobs":null,"finish_reason":null}]}\n\n`,
  );
}
frames.push(
  'data: {"id":"chatcmpl-x","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n',
  'data: [DONE]\n\n',
);
const encoder = new TextEncoder();
const chunks = frames.map((f) => encoder.encode(f));
const body = () =>
  new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });

async function sdkIterator() {
  const stream = Stream.fromSSEResponse(new Response(body()), new AbortController());
  const normalizer = new ChunkNormalizer();
  const out = [];
  for await (const chunk of stream) {
    normalizer.push(chunk, out);
    out.length = 0;
  }
}

async function sseParser() {
  const reader = body().getReader();
  const normalizer = new ChunkNormalizer();
  const out = [];
  const parser = new SseParser((data) => {
    if (data === '[DONE]') return true;
    normalizer.push(JSON.parse(data), out);
    out.length = 0;
  });
  while (!parser.done) {
    const read = await reader.read();
    if (read.done) {
      parser.end();
      break;
    }
    parser.push(read.value);
  }
}

const RUNS = 2000;
for (const [name, fn] of [
  ['openai SDK iterator', sdkIterator],
  ['SseParser', sseParser],
]) {
  for (let i = 0; i < 200; i++) await fn();
  const start = process.cpuUsage();
  for (let i = 0; i < RUNS; i++) await fn();
  const used = process.cpuUsage(start);
  console.log(`${name.padEnd(20)} ${((used.user + used.system) / 1000 / RUNS).toFixed(3)} ms CPU per answer`);
}
