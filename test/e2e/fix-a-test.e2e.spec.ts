import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  FakeUpstream,
  text,
  toolCalls,
  type RecordedRequest,
  type ScriptedResponse,
} from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import { eventsOfType, timeline, toolCallRecords, toolMessagesOf } from '../support/agent-scripts';
import { api, openStream } from '../support/sse-client';

const sha256 = (data: string): string => createHash('sha256').update(data).digest('hex');

const BUGGY_MATH = `function add(a, b) {
  return a - b;
}

function multiply(a, b) {
  return a * b;
}

module.exports = { add, multiply };
`;

const TEST_JS = `const assert = require('node:assert');
const { add, multiply } = require('./math');

let failed = 0;
for (const [name, check] of [
  ['add', () => assert.strictEqual(add(2, 3), 5)],
  ['multiply', () => assert.strictEqual(multiply(2, 3), 6)],
]) {
  try {
    check();
    console.log('ok - ' + name);
  } catch (err) {
    failed++;
    console.error('not ok - ' + name + ': ' + err.message.split('\\n')[0]);
  }
}
process.exit(failed === 0 ? 0 : 1);
`;

/**
 * A scripted model that fixes the project the way an agent would, deciding each step from the tool
 * results it has been sent: read the test, read the code, run the test, patch the line it found,
 * run the test again, answer. Anything unexpected ends the run with a text saying what it saw.
 */
function fixingModel(project: string) {
  return (request: RecordedRequest): ScriptedResponse => {
    const results = toolMessagesOf(request).map((m) => m.content);
    const last = results.at(-1) ?? '';
    const unexpected = (): ScriptedResponse => text(`UNEXPECTED at step ${results.length}: ${last}`);
    const runTests = toolCalls([
      { name: 'run_command', arguments: { command: 'node test.js', cwd: project } },
    ]);
    switch (results.length) {
      case 0:
        return toolCalls([{ name: 'read_file', arguments: { path: `${project}/test.js` } }], {
          text: 'Let me look at the test first.',
        });
      case 1:
        if (!last.includes("require('./math')")) return unexpected();
        return toolCalls([{ name: 'read_file', arguments: { path: `${project}/math.js` } }]);
      case 2:
        if (!last.includes('function add')) return unexpected();
        return runTests;
      case 3: {
        if (!last.includes('exit code 1') || !last.includes('not ok - add')) return unexpected();
        const patch = patchFor(results[1], project);
        return patch === null ? unexpected() : toolCalls([{ name: 'apply_patch', arguments: { patch } }]);
      }
      case 4:
        if (!last.includes('Applied the patch')) return unexpected();
        return runTests;
      case 5:
        if (!last.includes('exit code 0') || last.includes('not ok')) return unexpected();
        return text('Fixed: add() subtracted instead of adding. Both tests pass now.');
      default:
        return unexpected();
    }
  };
}

/** A unified diff turning `a - b` into `a + b` in the math.js the model read, with a line of context each side. */
function patchFor(mathJs: string, project: string): string | null {
  const lines = mathJs.split('\n');
  const at = lines.findIndex((line) => line.includes('return a - b;'));
  if (at < 1 || at + 1 >= lines.length) return null;
  return [
    `--- a/${project}/math.js`,
    `+++ b/${project}/math.js`,
    `@@ -${at},3 +${at},3 @@`,
    ` ${lines[at - 1]}`,
    `-${lines[at]}`,
    `+${lines[at].replace('a - b', 'a + b')}`,
    ` ${lines[at + 1]}`,
    '',
  ].join('\n');
}

describe('an agent in write mode fixes a failing test (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({
      PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      OPENAI_BASE_URL: upstream.baseUrl,
      ENABLE_RUN_COMMAND: 'true',
      TOOL_POLICY: 'run_command=allow',
    });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('reads, runs the failing test, patches the bug, reruns the test and answers, all on the stream', async () => {
    const project = 'calc';
    const dir = join(app.workspace, project);
    mkdirSync(dir);
    writeFileSync(join(dir, 'math.js'), BUGGY_MATH);
    writeFileSync(join(dir, 'test.js'), TEST_JS);
    expect(spawnSync('node', ['test.js'], { cwd: dir }).status).toBe(1);
    upstream.fallback = fixingModel(project);
    const before = upstream.requests.length;

    const stream = await openStream(`${app.url}/v1/chat`, {
      body: { prompt: 'The tests in calc fail. Fix the code.', mode: 'write' },
    });
    expect(stream.status).toBe(200);
    const events = await stream.rest(20_000);

    // The whole story, in order.
    expect(timeline(events)).toEqual([
      'run_started',
      'text',
      'start:read_file',
      'step_finished',
      'result:read_file',
      'start:read_file',
      'step_finished',
      'result:read_file',
      'start:run_command',
      'step_finished',
      'output',
      'result:run_command',
      'start:apply_patch',
      'step_finished',
      'result:apply_patch',
      'start:run_command',
      'step_finished',
      'output',
      'result:run_command',
      'text',
      'step_finished',
      'done',
    ]);
    expect(eventsOfType(events, 'tool_approval_required')).toEqual([]);
    expect(events.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed', iterations: 6 });
    expect(upstream.requests.length - before).toBe(6);

    const starts = eventsOfType(events, 'tool_call_start').map((e) => e.data);
    const results = eventsOfType(events, 'tool_call_result').map((e) => e.data);
    expect(results.map((r) => r.toolCallId)).toEqual(starts.map((s) => s.toolCallId));
    for (const result of results) expect(result.isError).toBe(false);
    expect(results[0].content).toBe(TEST_JS);
    expect(results[1].content).toBe(BUGGY_MATH);

    // The first test run fails, visibly and live.
    const [firstRun, , secondRun] = [results[2], results[3], results[4]];
    const outputOf = (callId: string) =>
      eventsOfType(events, 'tool_call_output')
        .filter((e) => e.data.toolCallId === callId)
        .map((e) => e.data);
    expect(firstRun.content).toContain('exit code 1');
    expect(outputOf(firstRun.toolCallId)).toContainEqual(
      expect.objectContaining({ stream: 'stderr', chunk: expect.stringContaining('not ok - add') }),
    );

    // The patch is on the stream as the model sent it, and was applied.
    expect(starts[3].name).toBe('apply_patch');
    expect(starts[3].arguments.patch).toContain('+  return a + b;');
    expect(results[3].content).toContain('modified calc/math.js');

    // The second run passes.
    expect(secondRun.content).toContain('exit code 0');
    expect(secondRun.content).toContain('ok - add');
    expect(secondRun.content).not.toContain('not ok');
    expect(
      outputOf(secondRun.toolCallId)
        .map((o) => o.chunk)
        .join(''),
    ).toContain('ok - add');

    const lastResult = events.findLastIndex((e) => e.event === 'tool_call_result');
    const answer = eventsOfType(events.slice(lastResult), 'text')
      .map((e) => e.data.delta)
      .join('');
    expect(answer).toContain('Both tests pass now.');
    expect(answer).not.toContain('UNEXPECTED');

    // On disk: fixed, and the tests pass outside the server too.
    const fixed = BUGGY_MATH.replace('a - b', 'a + b');
    expect(readFileSync(join(dir, 'math.js'), 'utf8')).toBe(fixed);
    expect(readFileSync(join(dir, 'test.js'), 'utf8')).toBe(TEST_JS);
    const rerun = spawnSync('node', ['test.js'], { cwd: dir, encoding: 'utf8' });
    expect(rerun.status).toBe(0);

    // Stored: every call completed, the patch with its before/after hashes.
    const runId = events[0].data.runId;
    const records = await toolCallRecords(app.databaseUrl, runId);
    expect(records.map((r) => [r.name, r.status, r.is_error])).toEqual([
      ['read_file', 'completed', false],
      ['read_file', 'completed', false],
      ['run_command', 'completed', false],
      ['apply_patch', 'completed', false],
      ['run_command', 'completed', false],
    ]);
    expect(records[3].changes).toEqual([
      { path: 'calc/math.js', beforeSha256: sha256(BUGGY_MATH), afterSha256: sha256(fixed) },
    ]);

    // The stored conversation replays what the model saw.
    const session = await api(app.url, 'GET', `/v1/sessions/${events[0].data.sessionId}`);
    const messages = session.body.messages;
    expect(messages.map((m: any) => m.role)).toEqual([
      'system',
      'user',
      ...Array.from({ length: 5 }, () => ['assistant', 'tool']).flat(),
      'assistant',
    ]);
    expect(messages.filter((m: any) => m.role === 'tool').map((m: any) => m.content)).toEqual(
      results.map((r) => r.content),
    );
    expect(messages[2].content).toBe('Let me look at the test first.');
    expect(messages.at(-1).content).toBe(answer);
  });
});
