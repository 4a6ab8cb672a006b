// A real MCP server over stdio for the tests, written with the official SDK's McpServer.
// Files it writes (paths from its environment, given through the MCP config's "env"):
//   MARKER_FILE  one line per execution of the destructive tool
//   CANCEL_FILE  one line per cancelled slow call ("cancelled <reason>")
//   START_FILE   one line per start of this process (so a test can see it came back)
//   CALLS_FILE   one line per start of a slow_read ("read") or slow_write ("write") call
//   LIST_FILE    one line per tools/list request it answered
// Floods, for the tests of what a server that never stops costs the service:
//   FLOOD=cursor        tools/list answers every page with 10 tools and a new nextCursor, forever
//   FLOOD=list_changed  once initialized, notifications/tools/list_changed without end (FLOOD_RATE a
//                       second); NOTICE_FILE holds how many were sent so far
//   FILLER_TOOLS=n      n more tools, each with input and output schemas (a list of a real server's size)
//   the tool flood_progress sends `count` progress notices of `size` bytes each, then returns
import { appendFileSync, writeFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

const env = process.env;
if (env.START_FILE) appendFileSync(env.START_FILE, `${process.pid}\n`);
if (env.FAIL_AT_START === '1') {
  // A server whose last words quote its configuration (MCP_CONFIG gives it a token as ENV_TOKEN).
  process.stderr.write(
    `this server refuses to start${env.ENV_TOKEN ? ` with token ${env.ENV_TOKEN}` : ''}\n`,
  );
  process.exit(3);
}

const server = new McpServer({ name: 'loopwright-test-server', version: '1.0.0' });

server.registerTool(
  'read_note',
  {
    description: 'Reads a note by title.',
    inputSchema: { title: z.string(), owner: z.email().optional() },
    annotations: { readOnlyHint: true },
  },
  async ({ title }) => ({ content: [{ type: 'text', text: `Note "${title}": buy milk` }] }),
);

server.registerTool(
  'delete_everything',
  {
    description: 'Deletes everything (writes a marker line instead).',
    inputSchema: { reason: z.string() },
    annotations: { destructiveHint: true },
  },
  async ({ reason }) => {
    appendFileSync(env.MARKER_FILE, `${reason}\n`);
    return { content: [{ type: 'text', text: 'Everything deleted.' }] };
  },
);

server.registerTool(
  'slow',
  {
    description: 'Reports progress, then waits until cancelled.',
    inputSchema: {},
    annotations: { readOnlyHint: true },
  },
  async (_args, extra) => {
    const token = extra._meta?.progressToken;
    if (token !== undefined) {
      await extra.sendNotification({
        method: 'notifications/progress',
        params: { progressToken: token, progress: 1, total: 3, message: 'warming up' },
      });
      await extra.sendNotification({
        method: 'notifications/progress',
        params: { progressToken: token, progress: 2, total: 3 },
      });
    }
    await new Promise((resolve) => {
      extra.signal.addEventListener(
        'abort',
        () => {
          appendFileSync(env.CANCEL_FILE, `cancelled ${String(extra.signal.reason ?? '')}\n`);
          resolve(undefined);
        },
        { once: true },
      );
    });
    return { content: [{ type: 'text', text: 'cancelled' }] };
  },
);

server.registerTool(
  'fail',
  { description: 'Always fails.', inputSchema: {}, annotations: { readOnlyHint: true } },
  async () => ({ content: [{ type: 'text', text: 'The quota is exhausted.' }], isError: true }),
);

// 12 KB of bytes (the PNG signature, then zeros), base64 encoded.
const IMAGE = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.alloc(12 * 1024 - 4)]).toString(
  'base64',
);
server.registerTool(
  'snapshot',
  { description: 'Returns a picture.', inputSchema: {}, annotations: { readOnlyHint: true } },
  async () => ({
    content: [
      { type: 'text', text: 'Here is the picture.' },
      { type: 'image', data: IMAGE, mimeType: 'image/png' },
      {
        type: 'resource',
        resource: { uri: 'file:///notes/a.txt', mimeType: 'text/plain', text: 'resource text' },
      },
    ],
  }),
);

server.registerTool(
  'weather',
  {
    description: 'Structured weather.',
    inputSchema: {},
    outputSchema: { temperature: z.number(), sky: z.string() },
    annotations: { readOnlyHint: true },
  },
  async () => ({
    content: [{ type: 'text', text: 'Sunny and mild.' }],
    structuredContent: { temperature: 21.5, sky: 'clear' },
  }),
);

server.registerTool(
  'environment',
  { description: 'Reports its environment.', inputSchema: {}, annotations: { readOnlyHint: true } },
  async () => ({ content: [{ type: 'text', text: JSON.stringify(process.env) }] }),
);

server.registerTool(
  'add_tool',
  { description: 'Adds the tool "late".', inputSchema: {}, annotations: { readOnlyHint: true } },
  async () => {
    // Registering after connect makes McpServer send notifications/tools/list_changed.
    server.registerTool(
      'late',
      { description: 'A tool that appeared later.', inputSchema: {}, annotations: { readOnlyHint: true } },
      async () => ({ content: [{ type: 'text', text: 'late tool ran' }] }),
    );
    return { content: [{ type: 'text', text: 'added' }] };
  },
);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

server.registerTool(
  'slow_read',
  {
    description: 'Reads something, taking `ms` milliseconds.',
    inputSchema: { ms: z.number() },
    annotations: { readOnlyHint: true },
  },
  async ({ ms }) => {
    appendFileSync(env.CALLS_FILE, 'read\n');
    await sleep(ms);
    return { content: [{ type: 'text', text: `read in ${ms} ms` }] };
  },
);

server.registerTool(
  'slow_write',
  {
    description: 'Changes something, taking `ms` milliseconds.',
    inputSchema: { ms: z.number() },
    annotations: { destructiveHint: true },
  },
  async ({ ms }) => {
    appendFileSync(env.CALLS_FILE, 'write\n');
    await sleep(ms);
    return { content: [{ type: 'text', text: `written in ${ms} ms` }] };
  },
);

server.registerTool(
  'crash',
  { description: 'Exits the process mid-call.', inputSchema: {}, annotations: { readOnlyHint: true } },
  async () => {
    process.exit(1);
  },
);

server.registerTool(
  'flood_progress',
  {
    description: 'Sends count progress notices of size bytes each, then returns.',
    inputSchema: { count: z.number().int(), size: z.number().int() },
    annotations: { readOnlyHint: true },
  },
  async ({ count, size }, extra) => {
    const token = extra._meta?.progressToken;
    for (let i = 0; i < count && token !== undefined; i++) {
      const message = `notice ${i} `.padEnd(size, 'x');
      await extra.sendNotification({
        method: 'notifications/progress',
        params: { progressToken: token, progress: i + 1, total: count, message },
      });
    }
    return { content: [{ type: 'text', text: `sent ${count} notices` }] };
  },
);

for (let i = 0; i < Number(env.FILLER_TOOLS ?? 0); i++) {
  server.registerTool(
    `filler_${i}`,
    {
      description: `Filler tool ${i}: ${'it does one small thing among many. '.repeat(10)}`,
      inputSchema: { query: z.string().max(200), limit: z.number().int().min(1).max(100).optional() },
      outputSchema: { items: z.array(z.object({ id: z.string(), score: z.number() })) },
      annotations: { readOnlyHint: true },
    },
    async () => ({ content: [{ type: 'text', text: '[]' }], structuredContent: { items: [] } }),
  );
}

// After the tools: McpServer installs its own tools/list handler with the first one.
if (env.FLOOD === 'cursor') {
  let pages = 0;
  server.server.setRequestHandler(ListToolsRequestSchema, async () => {
    pages += 1;
    const tools = Array.from({ length: 10 }, (_, i) => ({
      name: `endless_${pages}_${i}`,
      description: 'One of the tools of a list that never ends. '.repeat(50),
      inputSchema: { type: 'object' },
    }));
    return { tools, nextCursor: `page-${pages}` };
  });
}
if (env.LIST_FILE) {
  // Counts the requests, then answers as before (the SDK's own handler, kept in its request map).
  const handlers = server.server._requestHandlers;
  const listTools = handlers.get('tools/list');
  handlers.set('tools/list', (request, extra) => {
    appendFileSync(env.LIST_FILE, 'list\n');
    return listTools(request, extra);
  });
}

const transport = new StdioServerTransport();
await server.connect(transport);

if (env.FLOOD === 'list_changed') {
  // FLOOD_RATE notices a second, in batches every 10 ms, for as long as the process lives.
  const perBatch = Math.max(1, Math.round(Number(env.FLOOD_RATE ?? 2000) / 100));
  let sent = 0;
  server.server.oninitialized = () => {
    setInterval(() => {
      for (let i = 0; i < perBatch; i++) server.sendToolListChanged();
      sent += perBatch;
      if (env.NOTICE_FILE) writeFileSync(env.NOTICE_FILE, String(sent));
    }, 10);
  };
}
