import { pdf, png } from '../support/attachments';
import { FakeUpstream, text } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';

const PNG = png(4, 4);
const PDF = pdf('Sent over AG-UI');

describe('AG-UI multimodal input as attachments (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({ OPENAI_BASE_URL: upstream.baseUrl });
  });
  afterAll(async () => {
    await app.close();
    await upstream.close();
  });

  const run = async (threadId: string, content: unknown[]) => {
    const res = await fetch(`${app.url}/v1/ag-ui`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({
        threadId,
        runId: `${threadId}-r1`,
        messages: [{ id: 'u1', role: 'user', content }],
        tools: [],
        context: [],
        state: {},
        forwardedProps: {},
      }),
    });
    return { status: res.status, body: await res.text() };
  };

  it('takes the binary part (data) and the 1.x document part (a file id) as an image and a PDF', async () => {
    const upload = await fetch(`${app.url}/v1/files?name=brief.pdf`, {
      method: 'POST',
      headers: { 'content-type': 'application/pdf' },
      body: PDF,
    });
    const { id } = (await upload.json()) as { id: string };
    upstream.enqueue(text('Seen both.'));
    const answer = await run('thread-files', [
      { type: 'text', text: 'What are these?' },
      { type: 'binary', mimeType: 'image/png', data: PNG.toString('base64'), filename: 'dot.png' },
      { type: 'document', source: { type: 'file', value: id, mimeType: 'application/pdf' } },
    ]);
    expect(answer.status).toBe(200);
    expect(answer.body).toContain('RUN_FINISHED');
    const user = upstream.requests[0].body.messages.find((m) => m.role === 'user');
    expect(user?.content).toEqual([
      { type: 'text', text: 'What are these?' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG.toString('base64')}` } },
      {
        type: 'file',
        file: { filename: 'brief.pdf', file_data: `data:application/pdf;base64,${PDF.toString('base64')}` },
      },
    ]);
  });

  it("refuses an image part whose file id is not the caller's, before anything runs", async () => {
    const before = upstream.requests.length;
    const answer = await run('thread-missing', [
      { type: 'image', source: { type: 'file', value: '00000000-0000-4000-8000-000000000001' } },
    ]);
    expect(answer.status).toBe(400);
    expect(answer.body).toContain('00000000-0000-4000-8000-000000000001');
    expect(upstream.requests.length).toBe(before);
  });
});
