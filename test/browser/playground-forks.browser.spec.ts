import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { PLAYGROUND_DIR } from '../../src/playground/playground-files';
import { startApp, type TestApp } from '../support/app';
import { CHROMIUM_PATH, launchChromium, type TestBrowser } from '../support/browser';
import { eventually } from '../support/eventually';
import { FakeUpstream, text, toolCalls } from '../support/fake-upstream';
import { api, openStream } from '../support/sse-client';

const KEY = 'secret-of-fay';
const AUTH = { authorization: `Bearer ${KEY}` };

const describeInBrowser = CHROMIUM_PATH === undefined ? describe.skip : describe;
if (CHROMIUM_PATH === undefined) {
  console.warn('playground fork tests skipped: no Chromium at /usr/bin/chromium (apt-get install chromium)');
}

interface Message {
  role: string;
  content: string | null;
}

/** "Edit" on a past prompt and "Regenerate" on an answer: both fork, and leave the source as it was. */
describeInBrowser('the playground edits a past prompt and regenerates an answer in a fork (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;
  let browser: TestBrowser;
  let page: Page;

  beforeAll(async () => {
    if (!existsSync(join(PLAYGROUND_DIR, 'index.html'))) {
      throw new Error(`the page is not built (${PLAYGROUND_DIR}): run npm run build first`);
    }
    upstream = await FakeUpstream.start();
    app = await startApp({ OPENAI_BASE_URL: upstream.baseUrl, API_KEYS: `fay:${KEY}` });
    browser = await launchChromium(CHROMIUM_PATH!);
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await upstream?.close();
  });
  afterEach(() => page?.close());

  const messages = async (sessionId: string): Promise<Message[]> =>
    (await api(app.url, 'GET', `/v1/sessions/${sessionId}`, undefined, AUTH)).body.messages;
  const shape = (m: Message) => [m.role, m.content];

  /** A session of ten prompts, each answered, written through the API. */
  async function tenPrompts(): Promise<string> {
    let sessionId: string | undefined;
    for (let i = 1; i <= 10; i++) {
      upstream.enqueue(text(`Answer number ${i}.`));
      const stream = await openStream(`${app.url}/v1/chat`, {
        body: { prompt: `Prompt number ${i}.`, ...(sessionId ? { sessionId } : {}) },
        headers: AUTH,
      });
      const events = await stream.rest();
      expect(events.at(-1)!.data.status).toBe('completed');
      sessionId = events[0].data.sessionId as string;
    }
    return sessionId!;
  }

  async function open(sessionId: string): Promise<void> {
    page = await browser.context.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${app.url}/?session=${sessionId}`);
    await page.getByLabel('API key').fill(KEY);
    await page.getByText('Answer number 10.').waitFor();
  }
  const sessionInAddress = () => new URL(page.url()).searchParams.get('session');

  it('editing the first of ten prompts forks before it and answers there, the source untouched', async () => {
    const sourceId = await tenPrompts();
    const before = await messages(sourceId);
    expect(before).toHaveLength(21);
    await open(sourceId);

    upstream.enqueue(text('An answer to the edit.'));
    const first = page.locator('.message.user.stored', { hasText: 'Prompt number 1.' });
    await first.getByRole('button', { name: 'Edit' }).click();
    await page.getByLabel('Edited prompt').fill('The edited first prompt.');
    await page.getByRole('button', { name: 'Send in a fork' }).click();
    await page.getByText('An answer to the edit.').waitFor();

    await eventually(() => sessionInAddress() !== sourceId);
    const forkId = sessionInAddress()!;
    // The fork holds the system message, the edited prompt and its answer; the model got no more.
    await eventually(async () => (await messages(forkId)).length === 3);
    expect((await messages(forkId)).map(shape)).toEqual([
      ['system', before[0].content],
      ['user', 'The edited first prompt.'],
      ['assistant', 'An answer to the edit.'],
    ]);
    const sent = upstream.requests.at(-1)!.body.messages as Message[];
    expect(sent.map((m) => m.role)).toEqual(['system', 'user']);
    expect(await messages(sourceId)).toEqual(before);
    // The page shows the fork only: the source's later prompts are gone from it.
    expect(await page.getByText('Prompt number 2.').count()).toBe(0);
  });

  it('regenerating the last answer forks before its prompt and answers the same prompt again', async () => {
    const sourceId = await tenPrompts();
    const before = await messages(sourceId);
    await open(sourceId);

    upstream.enqueue(text('Another tenth answer.'));
    const last = page.locator('.message.assistant.stored', { hasText: 'Answer number 10.' });
    await last.getByRole('button', { name: 'Regenerate' }).click();
    await page.getByText('Another tenth answer.').waitFor();

    await eventually(() => sessionInAddress() !== sourceId);
    const forkId = sessionInAddress()!;
    await eventually(async () => (await messages(forkId)).length === 21);
    const forked = await messages(forkId);
    expect(forked.slice(0, 20).map(shape)).toEqual(before.slice(0, 20).map(shape));
    expect(forked[20]).toMatchObject({ role: 'assistant', content: 'Another tenth answer.' });
    expect(await messages(sourceId)).toEqual(before);
  });

  it('replays a run from the run panel: the fork opens with the same answer, and the model is not called', async () => {
    upstream.enqueue(
      toolCalls([{ name: 'list_files', arguments: { path: '.' } }]),
      text('Listed the workspace.'),
    );
    const stream = await openStream(`${app.url}/v1/chat`, {
      body: { prompt: 'What is in the workspace?' },
      headers: AUTH,
    });
    const sourceId = (await stream.rest())[0].data.sessionId as string;
    const requests = upstream.requests.length;
    page = await browser.context.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${app.url}/?session=${sourceId}`);
    await page.getByLabel('API key').fill(KEY);
    await page.getByText('Listed the workspace.').waitFor();

    const panel = page.getByRole('complementary', { name: 'Run details' });
    await panel.getByRole('button', { name: 'Replay', exact: true }).click();
    await eventually(() => sessionInAddress() !== sourceId);
    const forkId = sessionInAddress()!;
    await eventually(async () => (await messages(forkId)).length === 5);
    await page.reload();
    await page.getByText('Listed the workspace.').waitFor();
    expect((await messages(forkId)).map(shape)).toEqual((await messages(sourceId)).map(shape));
    expect(upstream.requests).toHaveLength(requests);
  });

  it('replays a run from a step of its timeline: the steps before from the record, the rest live', async () => {
    upstream.enqueue(
      toolCalls([{ name: 'list_files', arguments: { path: '.' } }]),
      text('Listed it the first time.'),
    );
    const stream = await openStream(`${app.url}/v1/chat`, {
      body: { prompt: 'List the workspace.' },
      headers: AUTH,
    });
    const sourceId = (await stream.rest())[0].data.sessionId as string;
    const requests = upstream.requests.length;
    page = await browser.context.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${app.url}/?session=${sourceId}`);
    await page.getByLabel('API key').fill(KEY);
    await page.getByText('Listed it the first time.').waitFor();

    upstream.enqueue(text('Listed it live this time.'));
    const timeline = page.getByRole('list', { name: 'Timeline' });
    await timeline
      .getByRole('listitem')
      .filter({ hasText: 'Step 1' })
      .first()
      .getByRole('button', { name: 'Replay from here' })
      .click();
    await eventually(() => sessionInAddress() !== sourceId);
    await page.getByText('Listed it live this time.').waitFor();
    // One live model call: step 2; step 1 came from the record.
    expect(upstream.requests).toHaveLength(requests + 1);
    const forkId = sessionInAddress()!;
    expect((await messages(forkId)).map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
  });
});
