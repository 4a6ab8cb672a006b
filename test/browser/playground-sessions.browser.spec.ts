import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { PLAYGROUND_DIR } from '../../src/playground/playground-files';
import { startApp, type TestApp } from '../support/app';
import { CHROMIUM_PATH, launchChromium, type TestBrowser } from '../support/browser';
import { eventually } from '../support/eventually';
import { FakeUpstream, status, text, toolCalls } from '../support/fake-upstream';

const KEY = 'secret-of-bea';

const describeInBrowser = CHROMIUM_PATH === undefined ? describe.skip : describe;
if (CHROMIUM_PATH === undefined) {
  console.warn(
    'playground session tests skipped: no Chromium at /usr/bin/chromium (apt-get install chromium)',
  );
}

/** What the playground keeps of a session across a reload, a link followed and a switch of sessions. */
describeInBrowser('the playground keeps a session across reloads and switches (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;
  let browser: TestBrowser;
  let page: Page;

  beforeAll(async () => {
    if (!existsSync(join(PLAYGROUND_DIR, 'index.html'))) {
      throw new Error(`the page is not built (${PLAYGROUND_DIR}): run npm run build first`);
    }
    upstream = await FakeUpstream.start();
    app = await startApp({ OPENAI_BASE_URL: upstream.baseUrl, API_KEYS: `bea:${KEY}` });
    browser = await launchChromium(CHROMIUM_PATH!);
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await upstream?.close();
  });

  beforeEach(async () => {
    upstream.reset();
    page = await browser.context.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${app.url}/`);
    await page.getByLabel('API key').fill(KEY);
  });
  afterEach(() => page.close());

  const send = async (prompt: string) => {
    await page.getByLabel('Message').fill(prompt);
    await page.getByRole('button', { name: 'Send' }).click();
  };
  const sessionInAddress = () => new URL(page.url()).searchParams.get('session');
  const sessionsList = () => page.getByRole('list', { name: 'Sessions' });

  it('puts the session in the address: Back after a link in an answer, and a reload with an approval waiting, open it again', async () => {
    upstream.enqueue(
      text('All is well: see [the readiness check](/health/ready).'),
      toolCalls([
        { name: 'write_file', arguments: { path: 'kept.txt', content: 'approved after a reload\n' } },
      ]),
      text('Wrote kept.txt.'),
    );
    await send('is it up?');
    const link = page.getByRole('link', { name: 'the readiness check' });
    await link.waitFor();
    await eventually(() => sessionInAddress() !== null);
    const sessionId = sessionInAddress();
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);

    await link.click();
    await page.waitForURL(/\/health\/ready$/);
    await page.goBack();
    expect(sessionInAddress()).toBe(sessionId);
    await page.getByText('All is well').waitFor();

    await send('write kept.txt');
    const card = page.getByRole('region', { name: 'Tool call write_file' });
    await card.getByRole('button', { name: 'Approve' }).waitFor();
    await page.reload();
    expect(sessionInAddress()).toBe(sessionId);
    await page.getByText('All is well').waitFor();
    // The call still waits, and its card can approve it.
    const restored = page.getByRole('region', { name: 'Tool call write_file' });
    await restored.getByRole('button', { name: 'Approve' }).click();
    await page.getByText('Wrote kept.txt.').waitFor();
    expect(readFileSync(join(app.workspace, 'kept.txt'), 'utf8')).toBe('approved after a reload\n');

    // A new chat leaves the address of the session.
    await page.getByRole('button', { name: 'New chat' }).click();
    await eventually(() => sessionInAddress() === null);
  });

  it("shows a failed run's error again after switching to another session and back", async () => {
    upstream.enqueue(
      status(400, { error: { message: 'model "nope" does not exist', type: 'invalid_request_error' } }),
      text('A fine answer.'),
    );
    await send('this will fail');
    await page.locator('.run-error').waitFor();

    await page.getByRole('button', { name: 'New chat' }).click();
    await send('something else');
    await page.getByText('A fine answer.').waitFor();
    expect(await page.locator('.run-error').count()).toBe(0);

    await sessionsList()
      .getByRole('button', { name: /this will fail/ })
      .click();
    await page.locator('.message.user.stored', { hasText: 'this will fail' }).waitFor();
    const failure = page.locator('.run-error');
    await failure.waitFor();
    expect(await failure.textContent()).toMatch(/^The run failed: .*model "nope" does not exist$/);
    await page.reload();
    await page.locator('.run-error').waitFor();
    expect(await page.locator('.run-error').textContent()).toMatch(/model "nope" does not exist$/);
  });

  it('shows the arguments a person approved a call with, not the model’s, live and stored', async () => {
    upstream.enqueue(
      toolCalls([{ name: 'write_file', arguments: { path: 'edited.txt', content: 'model line\n' } }]),
      text('Written as you edited it.'),
    );
    await send('write edited.txt');
    const card = page.getByRole('region', { name: 'Tool call write_file' });
    await card.getByRole('button', { name: 'Edit arguments' }).click();
    await card
      .getByLabel('Arguments (JSON)')
      .fill(JSON.stringify({ path: 'edited.txt', content: 'person line\n' }, null, 2));
    await card.getByRole('button', { name: 'Approve' }).click();
    await page.getByText('Written as you edited it.').waitFor();
    expect(readFileSync(join(app.workspace, 'edited.txt'), 'utf8')).toBe('person line\n');

    const shown = async () => (await card.locator('.tool-arguments').textContent()) ?? '';
    expect(await shown()).toContain('person line');
    expect(await shown()).not.toContain('model line');
    // The model's own arguments stay readable, folded away.
    await expect(card.locator('.tool-model-arguments pre').textContent()).resolves.toContain('model line');

    await page.reload();
    await page.getByText('Written as you edited it.').waitFor();
    expect(await shown()).toContain('person line');
    expect(await shown()).not.toContain('model line');
  });
});
