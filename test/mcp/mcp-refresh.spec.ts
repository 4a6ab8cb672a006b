import { Logger } from '@nestjs/common';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CoalescedTask } from '../../src/mcp/coalesced-task';
import { McpConnection } from '../../src/mcp/mcp-connection';
import type { McpStdioServerConfig } from '../../src/config/mcp-config';
import { eventually } from '../support/eventually';

const TEST_SERVER = resolve(__dirname, '../support/mcp-test-server.mjs');

const lines = (file: string): number =>
  existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0;

/** The real stdio test server, announcing list changes FLOOD_RATE times a second without changing its list. */
function chattyServer(dir: string): McpStdioServerConfig {
  return {
    name: 'chatty',
    transport: 'stdio',
    command: process.execPath,
    args: [TEST_SERVER],
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      FLOOD: 'list_changed',
      FLOOD_RATE: '500',
      LIST_FILE: join(dir, 'lists.txt'),
      NOTICE_FILE: join(dir, 'notices.txt'),
    },
    cwd: null,
    tools: null,
    timeoutMs: 10_000,
  };
}

describe('McpConnection refreshing its tool list', () => {
  let connection: McpConnection | undefined;
  afterEach(() => connection?.stop());

  it('keeps an unchanged tool’s object (and so its compiled schema) and reports no change, however many notices come', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loopwright-mcp-refresh-'));
    let changes = 0;
    connection = new McpConnection(chattyServer(dir), new Logger('test'), () => (changes += 1));
    connection.start();
    await eventually(() => connection!.status === 'connected', 20_000);
    const listed = [...connection.listed];
    const changesWhenConnected = changes;
    expect(listed.map((t) => t.name)).toContain('read_note');

    // Several refreshes of the same list, caused by the flood of notices.
    const lists = lines(join(dir, 'lists.txt'));
    await eventually(() => lines(join(dir, 'lists.txt')) >= lists + 5, 20_000);

    expect(connection.status).toBe('connected');
    expect(connection.listed).toHaveLength(listed.length);
    connection.listed.forEach((tool, i) => expect(tool).toBe(listed[i]));
    expect(changes).toBe(changesWhenConnected);
  });
});

describe('CoalescedTask', () => {
  it('runs once in flight and once more for any number of requests meanwhile, and reports a failure once', async () => {
    let runs = 0;
    let inFlight = 0;
    let most = 0;
    const failures: unknown[] = [];
    let release: () => void = () => undefined;
    const task = new CoalescedTask(
      async () => {
        runs += 1;
        inFlight += 1;
        most = Math.max(most, inFlight);
        await new Promise<void>((r) => (release = r));
        inFlight -= 1;
      },
      (err) => failures.push(err),
    );
    const first = task.request();
    const later = Array.from({ length: 1000 }, () => task.request());
    release(); // the first run ends; the pending one starts
    await new Promise((r) => setImmediate(r));
    release();
    await Promise.all([first, ...later]);
    expect({ runs, most }).toEqual({ runs: 2, most: 1 });

    const failing = new CoalescedTask(
      () => Promise.reject(new Error('list too long')),
      (err) => failures.push(err),
    );
    await expect(failing.request()).rejects.toThrow('list too long');
    expect(failures).toHaveLength(1);
  });
});
