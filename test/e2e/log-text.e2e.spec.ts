import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase } from '../support/database';
import { eventually } from '../support/eventually';
import { spawnServer, type ServerProcess } from '../support/server-process';

/** The README: logs are JSON lines whenever stdout is not a terminal — and text when it is (LOG_FORMAT). */
describe('log lines follow LOG_FORMAT (e2e)', () => {
  let server: ServerProcess | undefined;
  afterEach(async () => {
    await server?.kill('SIGKILL');
  });

  it.each([
    ['pretty', /^\d\d:\d\d:\d\d\.\d{3} INFO {2}GET \/v1\/models 200 \d+ms/m],
    ['json', /^\{"level":30,.*"url":"\/v1\/models".*"statusCode":200/m],
  ])('LOG_FORMAT=%s writes request lines as it says', async (format, requestLine) => {
    server = await spawnServer({
      DATABASE_URL: await createTestDatabase(),
      WORKSPACE_ROOT: mkdtempSync(join(tmpdir(), 'loopwright-logs-')),
      OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
      LOG_LEVEL: 'info',
      LOG_FORMAT: format,
    });
    expect((await fetch(`${server.url}/v1/models`)).status).toBe(200);
    await eventually(() => requestLine.test(server!.output()));
    if (format === 'pretty') expect(server.output()).not.toMatch(/^\{"level"/m);
  });
});
