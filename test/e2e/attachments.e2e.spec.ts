import type {
  ImageBlockParam,
  DocumentBlockParam,
  TextBlockParam,
} from '@anthropic-ai/sdk/resources/messages/messages';
import type { ChatCompletionContentPart } from 'openai/resources/chat/completions';
import type { ResponseInputContent } from 'openai/resources/responses/responses';
import { png, pdf } from '../support/attachments';
import { FakeAnthropic, anthropicText } from '../support/fake-anthropic';
import { FakeResponses, responsesText } from '../support/fake-responses';
import { FakeUpstream, text } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { api, openStream } from '../support/sse-client';

const PNG = png(3, 2);
const PDF = pdf('Quarterly report');
const b64 = (b: Buffer) => b.toString('base64');
const NOTES = 'hello notes';
const NOTES_URL = `data:text/plain;base64,${b64(Buffer.from(NOTES))}`;

async function uploadFile(app: TestApp, bytes: Buffer, type: string, name: string): Promise<string> {
  const res = await fetch(`${app.url}/v1/files?name=${encodeURIComponent(name)}`, {
    method: 'POST',
    headers: { 'content-type': type },
    body: bytes,
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

/** The same prompt on every provider: a question, a PNG and a PDF by id, a text file as a data URL. */
async function promptWithFiles(app: TestApp) {
  return [
    { type: 'text', text: 'What is in these?' },
    { type: 'file', fileId: await uploadFile(app, PNG, 'image/png', 'shot.png') },
    { type: 'file', fileId: await uploadFile(app, PDF, 'application/pdf', 'report.pdf') },
    { type: 'file', url: NOTES_URL, name: 'notes.txt' },
  ];
}

async function completedRun(app: TestApp, body: Record<string, unknown>): Promise<{ sessionId: string }> {
  const stream = await openStream(`${app.url}/v1/chat`, { body });
  expect({ status: stream.status, error: stream.errorBody }).toEqual({ status: 200, error: null });
  const events = await stream.rest();
  expect(events.at(-1)!.data).toMatchObject({ status: 'completed' });
  return { sessionId: String(events[0].data.sessionId) };
}

describe('attachments in prompts, sent natively to each provider (e2e)', () => {
  let openai: FakeUpstream;
  let anthropic: FakeAnthropic;
  let responses: FakeResponses;
  let app: TestApp;
  let responsesApp: TestApp;

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
    // The Responses API is reached with the openai provider's key and base URL.
    responsesApp = await startApp({ OPENAI_BASE_URL: responses.baseUrl, LLM_MAX_RETRIES: '0' });
  });
  afterAll(async () => {
    await Promise.all([app.close(), responsesApp.close()]);
    await Promise.all([openai.close(), anthropic.close(), responses.close()]);
  });

  it('Chat Completions: image_url and file parts with data URLs, the text file as a named text part', async () => {
    openai.enqueue(text('A red square and a report.'));
    await completedRun(app, { prompt: await promptWithFiles(app), model: 'openai/gpt-test' });
    const expected: ChatCompletionContentPart[] = [
      { type: 'text', text: 'What is in these?' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${b64(PNG)}` } },
      {
        type: 'file',
        file: { filename: 'report.pdf', file_data: `data:application/pdf;base64,${b64(PDF)}` },
      },
      { type: 'text', text: `<file name="notes.txt">\n${NOTES}\n</file>` },
    ];
    const user = openai.requests[0].body.messages.find((m) => m.role === 'user');
    expect(user).toEqual({ role: 'user', content: expected });
  });

  it('Anthropic: image and document blocks (base64), the text file as a named text block', async () => {
    anthropic.enqueue(anthropicText('A red square and a report.'));
    await completedRun(app, { prompt: await promptWithFiles(app), model: 'anthropic/claude-test' });
    expect(anthropic.refusals).toEqual([]);
    const expected: (TextBlockParam | ImageBlockParam | DocumentBlockParam)[] = [
      { type: 'text', text: 'What is in these?' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: b64(PNG) } },
      {
        type: 'document',
        source: { type: 'base64', media_type: 'application/pdf', data: b64(PDF) },
        title: 'report.pdf',
      },
      { type: 'text', text: `<file name="notes.txt">\n${NOTES}\n</file>` },
    ];
    const content = anthropic.requests[0].body.messages[0].content as Record<string, unknown>[];
    // Only cache_control marks may be added to the blocks.
    expect(content.map(({ cache_control: _, ...block }) => block)).toEqual(expected);
  });

  it('Responses: input_image and input_file with data URLs, the text file as named input_text', async () => {
    responses.enqueue(responsesText('A red square and a report.'));
    await completedRun(responsesApp, {
      prompt: await promptWithFiles(responsesApp),
      model: 'openai-responses/gpt-test',
    });
    expect(responses.refusals).toEqual([]);
    const expected: ResponseInputContent[] = [
      { type: 'input_text', text: 'What is in these?' },
      { type: 'input_image', detail: 'auto', image_url: `data:image/png;base64,${b64(PNG)}` },
      { type: 'input_file', filename: 'report.pdf', file_data: `data:application/pdf;base64,${b64(PDF)}` },
      { type: 'input_text', text: `<file name="notes.txt">\n${NOTES}\n</file>` },
    ];
    const user = (responses.requests[0].body.input as Record<string, unknown>[]).find(
      (i) => i.role === 'user',
    );
    expect(user).toEqual({ role: 'user', content: expected });
  });

  it('stores references: the session shows parts and text; a deleted file is marked, and the model gets a note', async () => {
    openai.enqueue(text('Seen.'), text('It is gone.'));
    const shot = await uploadFile(app, PNG, 'image/png', 'shot.png');
    const { sessionId } = await completedRun(app, {
      prompt: [
        { type: 'text', text: 'Look.' },
        { type: 'file', fileId: shot },
        { type: 'text', text: 'Closely.' },
      ],
    });
    const user = (await api(app.url, 'GET', `/v1/sessions/${sessionId}`)).body.messages[1];
    expect(user).toMatchObject({
      role: 'user',
      content: 'Look.\n\nClosely.',
      parts: [
        { type: 'text', text: 'Look.' },
        { type: 'file', fileId: shot, name: 'shot.png', mediaType: 'image/png' },
        { type: 'text', text: 'Closely.' },
      ],
    });

    expect((await api(app.url, 'DELETE', `/v1/files/${shot}`)).status).toBe(204);
    const after = (await api(app.url, 'GET', `/v1/sessions/${sessionId}`)).body.messages[1];
    expect(after.parts[1]).toEqual({
      type: 'file',
      fileId: shot,
      name: 'shot.png',
      mediaType: 'image/png',
      deleted: true,
    });

    const next = await openStream(`${app.url}/v1/sessions/${sessionId}/messages`, {
      body: { content: 'And now?' },
    });
    await next.rest();
    const sent = openai.requests.at(-1)!.body.messages.find((m) => m.role === 'user')!;
    expect(sent.content).toEqual([
      { type: 'text', text: 'Look.' },
      { type: 'text', text: expect.stringContaining('"shot.png" was deleted') },
      { type: 'text', text: 'Closely.' },
    ]);
  });

  it("refuses a fileId that is not the caller's, naming it, before any stream or model call", async () => {
    const before = openai.requests.length;
    const missing = '00000000-0000-4000-8000-000000000000';
    const stream = await openStream(`${app.url}/v1/chat`, {
      body: {
        prompt: [
          { type: 'text', text: 'Hi' },
          { type: 'file', fileId: missing },
        ],
      },
    });
    expect(stream.status).toBe(400);
    expect(JSON.stringify(stream.errorBody)).toContain(missing);
    for (const prompt of [
      [],
      [{ type: 'image', url: 'x' }],
      [{ type: 'file', url: 'https://example.com/a.png' }],
    ]) {
      expect((await openStream(`${app.url}/v1/chat`, { body: { prompt } })).status).toBe(400);
    }
    // A data URL is stored under the upload's rules: bytes that are not what they claim are a 400.
    const broken = await openStream(`${app.url}/v1/chat`, {
      body: { prompt: [{ type: 'file', url: `data:image/png;base64,${b64(Buffer.from('not a png'))}` }] },
    });
    expect(broken.status).toBe(400);
    expect(openai.requests.length).toBe(before);
  });

  it('refuses an image or PDF for a model the registry knows takes none, naming the model; text files go anywhere', async () => {
    const before = openai.requests.length;
    const shot = await uploadFile(app, PNG, 'image/png', 'shot.png');
    const refused = await openStream(`${app.url}/v1/chat`, {
      body: { prompt: [{ type: 'file', fileId: shot }], model: 'openai/gpt-3.5-turbo' },
    });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.errorBody)).toContain('gpt-3.5-turbo');
    expect(openai.requests.length).toBe(before);

    openai.enqueue(text('Noted.'));
    await completedRun(app, {
      prompt: [{ type: 'file', url: NOTES_URL, name: 'notes.txt' }],
      model: 'openai/gpt-3.5-turbo',
    });
  });
});
