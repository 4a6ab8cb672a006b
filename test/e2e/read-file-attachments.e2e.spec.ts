import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type {
  DocumentBlockParam,
  ImageBlockParam,
  TextBlockParam,
  ToolResultBlockParam,
} from '@anthropic-ai/sdk/resources/messages/messages';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import { png, pdf } from '../support/attachments';
import { FakeAnthropic, anthropicText, anthropicToolUse } from '../support/fake-anthropic';
import { FakeResponses, responsesCalls, responsesText } from '../support/fake-responses';
import { FakeUpstream, text, toolCalls } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { api, openStream } from '../support/sse-client';

/*
 * read_file of an image or a PDF in the workspace ("Attachments"): the file goes to the model on
 * the NEXT call, natively on each provider (checked against the official SDKs' request types), is
 * stored as a reference, and stays behind the workspace's path rules.
 */

const PNG = png(3, 2);
const PDF = pdf('Quarterly report');
const b64 = (b: Buffer) => b.toString('base64');
// Names that say nothing of the type: the bytes decide.
const PNG_TEXT = `screen.bin: image (image/png, ${PNG.length} bytes), 3×2 pixels: attached.`;
const PDF_TEXT = `report.dat: PDF document (application/pdf, ${PDF.length} bytes): attached.`;

async function completedRun(app: TestApp, body: Record<string, unknown>) {
  const stream = await openStream(`${app.url}/v1/chat`, { body });
  expect({ status: stream.status, error: stream.errorBody }).toEqual({ status: 200, error: null });
  const events = await stream.rest();
  expect(events.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
  return { sessionId: String(events[0].data.sessionId), events };
}

describe('read_file of an image or PDF goes to the model, natively on each provider (e2e)', () => {
  let openai: FakeUpstream;
  let anthropic: FakeAnthropic;
  let responses: FakeResponses;
  let app: TestApp;
  let responsesApp: TestApp;
  let outside: string;

  beforeAll(async () => {
    [openai, anthropic, responses] = await Promise.all([
      FakeUpstream.start(),
      FakeAnthropic.start(),
      FakeResponses.start(),
    ]);
    app = await startApp({
      OPENAI_BASE_URL: openai.baseUrl,
      ANTHROPIC_API_KEY: 'sk-ant-test',
      ANTHROPIC_BASE_URL: anthropic.baseUrl,
      LLM_MAX_RETRIES: '0',
    });
    responsesApp = await startApp({ OPENAI_BASE_URL: responses.baseUrl, LLM_MAX_RETRIES: '0' });
    for (const ws of [app.workspace, responsesApp.workspace]) {
      writeFileSync(join(ws, 'screen.bin'), PNG);
      writeFileSync(join(ws, 'report.dat'), PDF);
    }
    outside = mkdtempSync(join(tmpdir(), 'loopwright-outside-'));
    writeFileSync(join(outside, 'secret.png'), PNG);
    mkdirSync(join(app.workspace, 'links'));
    symlinkSync(join(outside, 'secret.png'), join(app.workspace, 'links', 'secret.png'));
  });
  afterAll(async () => {
    await Promise.all([app.close(), responsesApp.close()]);
    await Promise.all([openai.close(), anthropic.close(), responses.close()]);
  });

  it('Chat Completions: the tool messages say "attached below", ONE user message after them holds the files', async () => {
    openai.enqueue(
      toolCalls([
        { id: 'call_png', name: 'read_file', arguments: { path: 'screen.bin' } },
        { id: 'call_pdf', name: 'read_file', arguments: { path: 'report.dat' } },
      ]),
      text('A red square and a report.'),
    );
    const { events } = await completedRun(app, { prompt: 'Look at both.', model: 'openai/gpt-test' });
    const results = events.filter((e) => e.data.type === 'tool_call_result').map((e) => e.data);
    // The two reads run side by side: their results come in either order.
    expect(Object.fromEntries(results.map((r) => [r.toolCallId, [r.content, r.isError]]))).toEqual({
      call_png: [PNG_TEXT, false],
      call_pdf: [PDF_TEXT, false],
    });
    const next = openai.requests[1];
    expect(next.refused).toBeFalsy();
    const messages = next.body.messages;
    const asked = messages.findIndex((m) => m.role === 'assistant');
    const expected: ChatCompletionMessageParam[] = [
      {
        role: 'tool',
        tool_call_id: 'call_png',
        content: `${PNG_TEXT}\n[The file is attached below, in the user message after the tool results.]`,
      },
      {
        role: 'tool',
        tool_call_id: 'call_pdf',
        content: `${PDF_TEXT}\n[The file is attached below, in the user message after the tool results.]`,
      },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Attached by the tool call call_png:' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${b64(PNG)}` } },
          { type: 'text', text: 'Attached by the tool call call_pdf:' },
          {
            type: 'file',
            file: { filename: 'report.dat', file_data: `data:application/pdf;base64,${b64(PDF)}` },
          },
        ],
      },
    ];
    expect(messages.slice(asked + 1)).toEqual(expected);
  });

  it('Anthropic: image and document blocks inside the tool_result content', async () => {
    anthropic.enqueue(
      anthropicToolUse([
        { name: 'read_file', input: { path: 'screen.bin' } },
        { name: 'read_file', input: { path: 'report.dat' } },
      ]),
      anthropicText('A red square and a report.'),
    );
    await completedRun(app, { prompt: 'Look at both.', model: 'anthropic/claude-test' });
    expect(anthropic.refusals).toEqual([]);
    const turn = anthropic.requests[1].body.messages.at(-1)!;
    expect(turn.role).toBe('user');
    const results = (turn.content as unknown as ToolResultBlockParam[]).map(
      ({ cache_control: _, tool_use_id: __, ...block }) => block,
    );
    const content = (...blocks: (TextBlockParam | ImageBlockParam | DocumentBlockParam)[]) => blocks;
    expect(results).toEqual([
      {
        type: 'tool_result',
        content: content(
          { type: 'text', text: PNG_TEXT },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: b64(PNG) } },
        ),
      },
      {
        type: 'tool_result',
        content: content(
          { type: 'text', text: PDF_TEXT },
          {
            type: 'document',
            source: { type: 'base64', media_type: 'application/pdf', data: b64(PDF) },
            title: 'report.dat',
          },
        ),
      },
    ]);
  });

  it('Responses: function_call_output whose output lists input_text with input_image / input_file', async () => {
    responses.enqueue(
      responsesCalls([
        { name: 'read_file', arguments: { path: 'screen.bin' } },
        { name: 'read_file', arguments: { path: 'report.dat' } },
      ]),
      responsesText('A red square and a report.'),
    );
    await completedRun(responsesApp, { prompt: 'Look at both.', model: 'openai-responses/gpt-test' });
    expect(responses.refusals).toEqual([]);
    const input = responses.requests[1].body.input as ResponseInputItem[];
    const outputs = input
      .filter((i) => i.type === 'function_call_output')
      .map(({ call_id: _, ...item }) => item);
    const expected: Omit<ResponseInputItem.FunctionCallOutput, 'call_id'>[] = [
      {
        type: 'function_call_output',
        output: [
          { type: 'input_text', text: PNG_TEXT },
          { type: 'input_image', detail: 'auto', image_url: `data:image/png;base64,${b64(PNG)}` },
        ],
      },
      {
        type: 'function_call_output',
        output: [
          { type: 'input_text', text: PDF_TEXT },
          {
            type: 'input_file',
            filename: 'report.dat',
            file_data: `data:application/pdf;base64,${b64(PDF)}`,
          },
        ],
      },
    ];
    expect(outputs).toEqual(expected);
  });

  it('keeps a reference in the stored tool message (the files store), not the bytes', async () => {
    openai.enqueue(
      toolCalls([{ id: 'call_ref', name: 'read_file', arguments: { path: 'screen.bin' } }]),
      text('Seen.'),
    );
    const { sessionId } = await completedRun(app, { prompt: 'Look.' });
    const messages = (await api(app.url, 'GET', `/v1/sessions/${sessionId}`)).body.messages as Record<
      string,
      unknown
    >[];
    const tool = messages.find((m) => m.role === 'tool')!;
    expect(tool.content).toBe(PNG_TEXT);
    expect(JSON.stringify(tool)).not.toContain(b64(PNG));
    const file = (tool.parts as Record<string, unknown>[])[1];
    expect(file).toMatchObject({ type: 'file', name: 'screen.bin', mediaType: 'image/png' });
    const bytes = await fetch(`${app.url}/v1/files/${String(file.fileId)}`);
    expect(Buffer.from(await bytes.arrayBuffer())).toEqual(PNG);
  });

  it("a fork keeps the reference: the fork's next call sends the image again", async () => {
    openai.enqueue(
      toolCalls([{ id: 'call_forked', name: 'read_file', arguments: { path: 'screen.bin' } }]),
      text('Seen.'),
    );
    const { sessionId } = await completedRun(app, { prompt: 'Look.' });
    const fork = await api(app.url, 'POST', `/v1/sessions/${sessionId}/fork`, {});
    expect(fork.status).toBe(201);
    openai.enqueue(text('Still a red square.'));
    const before = openai.requests.length;
    await completedRun(app, { prompt: 'And now?', sessionId: fork.body.id });
    const messages = openai.requests[before].body.messages;
    const tool = messages.findIndex((m) => m.role === 'tool');
    expect(messages[tool + 1]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'Attached by the tool call call_forked:' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${b64(PNG)}` } },
      ],
    });
  });

  it('a replay from step 1 sends the recorded file to its live step, without reading the workspace again', async () => {
    writeFileSync(join(app.workspace, 'replayed.bin'), PNG);
    openai.enqueue(
      toolCalls([{ id: 'call_replayed', name: 'read_file', arguments: { path: 'replayed.bin' } }]),
      text('Seen.'),
    );
    const { events } = await completedRun(app, { prompt: 'Look.' });
    // The workspace's file changes: the replay's step 1 answers from the record, not from it.
    writeFileSync(join(app.workspace, 'replayed.bin'), 'not an image any more');
    openai.enqueue(text('Seen again.'));
    const before = openai.requests.length;
    const replay = await api(app.url, 'POST', `/v1/runs/${String(events[0].data.runId)}/replay`, {
      fromStep: 1,
    });
    expect(replay.status).toBe(201);
    const stream = await openStream(`${app.url}/v1/runs/${String(replay.body.runId)}/events`);
    expect((await stream.rest()).at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
    expect(openai.requests.length).toBe(before + 1);
    const messages = openai.requests[before].body.messages;
    expect(messages.at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'Attached by the tool call call_replayed:' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${b64(PNG)}` } },
      ],
    });
  });

  it('a replay going on with a model known to take no images gets a note in place of the recorded image', async () => {
    openai.enqueue(
      toolCalls([{ id: 'call_seen', name: 'read_file', arguments: { path: 'screen.bin' } }]),
      text('Seen.'),
    );
    const { events } = await completedRun(app, { prompt: 'Look.' });
    openai.enqueue(text('I am told there was an image.'));
    const before = openai.requests.length;
    const replay = await api(app.url, 'POST', `/v1/runs/${String(events[0].data.runId)}/replay`, {
      fromStep: 1,
      model: 'openai/gpt-3.5-turbo',
    });
    expect(replay.status).toBe(201);
    const stream = await openStream(`${app.url}/v1/runs/${String(replay.body.runId)}/events`);
    expect((await stream.rest()).at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
    const next = openai.requests[before];
    expect(next.body.model).toBe('gpt-3.5-turbo');
    expect(JSON.stringify(next.body)).not.toContain(b64(PNG));
    expect(next.body.messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'call_seen',
      content: `${PNG_TEXT}\n[The file "screen.bin" (image/png) is not shown: this model does not take images or PDFs.]`,
    });
  });

  it('a model the registry knows takes no images gets a text saying so, and no bytes', async () => {
    openai.enqueue(
      toolCalls([{ id: 'call_blind', name: 'read_file', arguments: { path: 'screen.bin' } }]),
      text('I cannot see it.'),
    );
    const before = openai.requests.length;
    await completedRun(app, { prompt: 'Look.', model: 'openai/gpt-3.5-turbo' });
    const next = openai.requests[before + 1];
    expect(next.refused).toBeFalsy();
    const tool = next.body.messages.find((m) => m.role === 'tool')!;
    expect(tool.content).toBe(
      `screen.bin: image (image/png, ${PNG.length} bytes). This model does not take images or PDFs, so the file is not shown to it; ask for a model that does, or read something else.`,
    );
    expect(JSON.stringify(next.body)).not.toContain(b64(PNG));
    expect(next.body.messages.at(-1)!.role).toBe('tool');
  });

  it('a path outside the workspace is still refused, through a symlink too: only the file inside is attached', async () => {
    openai.enqueue(
      toolCalls([
        { id: 'call_up', name: 'read_file', arguments: { path: join(outside, 'secret.png') } },
        { id: 'call_link', name: 'read_file', arguments: { path: 'links/secret.png' } },
        { id: 'call_in', name: 'read_file', arguments: { path: 'screen.bin' } },
      ]),
      text('Two refused, one seen.'),
    );
    const before = openai.requests.length;
    const { events } = await completedRun(app, { prompt: 'Read them.' });
    const results = events.filter((e) => e.data.type === 'tool_call_result').map((e) => e.data);
    expect(Object.fromEntries(results.map((r) => [r.toolCallId, r.isError]))).toEqual({
      call_up: true,
      call_link: true,
      call_in: false,
    });
    const next = openai.requests[before + 1];
    expect(next.refused).toBeFalsy();
    const attached = next.body.messages.at(-1)!;
    expect(attached).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'Attached by the tool call call_in:' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${b64(PNG)}` } },
      ],
    });
  });
});
