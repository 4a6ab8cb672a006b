import { createHash, randomUUID } from 'node:crypto';
import {
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { FakeUpstream, text, toolCalls } from '../support/fake-upstream';
import { startApp, type TestApp } from '../support/app';
import {
  eventsOfType,
  lastToolMessage,
  oneEvent,
  timeline,
  toolCallRecords,
  toolMessagesOf,
} from '../support/agent-scripts';
import { api, openStream, type OpenStream, type StreamEvent } from '../support/sse-client';

const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

describe('write tools through the HTTP loop (e2e)', () => {
  let upstream: FakeUpstream;
  let app: TestApp;
  /** A folder outside the workspace that nothing may reach. */
  let outside: string;

  beforeAll(async () => {
    upstream = await FakeUpstream.start();
    app = await startApp({ OPENAI_BASE_URL: upstream.baseUrl });
    outside = mkdtempSync(join(tmpdir(), 'loopwright-outside-'));
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
    rmSync(outside, { recursive: true, force: true });
  });

  /** A folder of its own in the workspace for one test; returns its workspace-relative name. */
  function folder(name: string): string {
    const rel = `${name}-${randomUUID().slice(0, 8)}`;
    mkdirSync(join(app.workspace, rel));
    return rel;
  }

  const ws = (rel: string): string => join(app.workspace, rel);

  async function chat(prompt: string, options: Record<string, unknown> = {}): Promise<OpenStream> {
    const stream = await openStream(`${app.url}/v1/chat`, { body: { prompt, ...options } });
    expect(stream.status).toBe(200);
    return stream;
  }

  const approve = (runId: string, callId: string, body: Record<string, unknown>) =>
    api(app.url, 'POST', `/v1/runs/${runId}/tool-calls/${callId}/approval`, body);

  /** Reads up to the approval request; returns the events so far and the call waiting. */
  async function untilApproval(
    stream: OpenStream,
  ): Promise<{ events: StreamEvent[]; runId: string; callId: string }> {
    const events = await stream.until('tool_approval_required');
    const required = events.at(-1)!;
    expect(required.event).toBe('tool_approval_required');
    return { events, runId: events[0].data.runId, callId: required.data.toolCallId };
  }

  describe('safe mode: write tools wait for a person', () => {
    it('shows the content in the approval, waits in requires_action, and writes the file once approved', async () => {
      const dir = folder('approve');
      const path = `${dir}/notes/hello.txt`;
      upstream.enqueue(
        toolCalls([{ name: 'write_file', arguments: { path, content: 'hello\nworld\n' } }]),
        text('I wrote the file.'),
      );
      const before = upstream.requests.length;
      const stream = await chat('write hello.txt');
      const { events, runId, callId } = await untilApproval(stream);

      expect(timeline(events)).toEqual(['run_started', 'start:write_file', 'tool_approval_required']);
      const start = oneEvent(events, 'tool_call_start');
      expect(start.data).toMatchObject({
        toolCallId: callId,
        name: 'write_file',
        arguments: { path, content: 'hello\nworld\n' },
        executor: 'server',
      });
      const required = events.at(-1)!.data;
      expect(required).toMatchObject({ name: 'write_file', arguments: { path, content: 'hello\nworld\n' } });
      expect(required.reason).toContain(`+++ b/${path}`);
      expect(required.reason).toContain('+hello');
      expect(required.reason).toContain('+world');

      // Nothing is written and the run waits, with the call and its diff in the run's state.
      expect(existsSync(ws(path))).toBe(false);
      const waiting = await api(app.url, 'GET', `/v1/runs/${runId}`);
      expect(waiting.body.status).toBe('requires_action');
      expect(waiting.body.pendingToolCalls).toEqual([
        expect.objectContaining({ toolCallId: callId, name: 'write_file', waitingFor: 'approval' }),
      ]);
      expect(waiting.body.pendingToolCalls[0].reason).toContain('+hello');
      expect(upstream.requests.length - before).toBe(1);

      expect((await approve(runId, callId, { approve: true })).status).toBe(202);
      const rest = await stream.rest();
      expect(timeline(rest)).toEqual(['step_finished', 'result:write_file', 'text', 'step_finished', 'done']);
      const result = oneEvent(rest, 'tool_call_result').data;
      expect(result).toMatchObject({ toolCallId: callId, name: 'write_file', isError: false });
      expect(result.errorCode).toBeUndefined();
      expect(rest.at(-1)!.data).toMatchObject({ status: 'completed', iterations: 2 });

      expect(readFileSync(ws(path), 'utf8')).toBe('hello\nworld\n');

      // The model's next request carries the tool message with the result.
      expect(upstream.requests.length - before).toBe(2);
      const tool = lastToolMessage(upstream.requests.at(-1)!);
      expect(tool).toEqual({ role: 'tool', tool_call_id: callId, content: result.content });
      expect(tool!.content).toContain('hello.txt');

      // Deciding the same call again is a conflict: it is no longer waiting.
      expect((await approve(runId, callId, { approve: true })).status).toBe(409);
      expect((await api(app.url, 'GET', `/v1/runs/${runId}`)).body).toMatchObject({
        status: 'completed',
        pendingToolCalls: [],
      });
    });

    it('does not write a rejected call and tells the model the reason', async () => {
      const dir = folder('reject');
      const path = `${dir}/rejected.txt`;
      upstream.enqueue(
        toolCalls([{ name: 'write_file', arguments: { path, content: 'should not exist\n' } }]),
        text('Understood, I will not write it.'),
      );
      const stream = await chat('write rejected.txt');
      const { runId, callId } = await untilApproval(stream);

      const rejected = await approve(runId, callId, { approve: false, reason: 'keep the repo clean' });
      expect(rejected.status).toBe(202);
      const rest = await stream.rest();
      const result = oneEvent(rest, 'tool_call_result').data;
      expect(result).toMatchObject({ toolCallId: callId, isError: true, errorCode: 'REJECTED' });
      expect(result.content).toContain('keep the repo clean');
      expect(rest.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });

      expect(existsSync(ws(path))).toBe(false);
      expect(readdirSync(ws(dir))).toEqual([]);
      const tool = lastToolMessage(upstream.requests.at(-1)!);
      expect(tool).toMatchObject({ tool_call_id: callId });
      expect(tool!.content).toContain('keep the repo clean');

      const [record] = await toolCallRecords(app.databaseUrl, runId);
      expect(record).toMatchObject({
        call_id: callId,
        status: 'error',
        is_error: true,
        error_code: 'REJECTED',
        changes: null,
        approval: expect.objectContaining({ approved: false, reason: 'keep the repo clean' }),
      });
    });

    it('runs an approval with edited arguments as edited and tells the model they were edited', async () => {
      const dir = folder('edited');
      const asked = `${dir}/asked.txt`;
      const edited = `${dir}/edited.txt`;
      upstream.enqueue(
        toolCalls([{ name: 'write_file', arguments: { path: asked, content: 'the model wrote this\n' } }]),
        text('Noted.'),
      );
      const stream = await chat('write asked.txt');
      const { runId, callId } = await untilApproval(stream);

      const response = await approve(runId, callId, {
        approve: true,
        arguments: { path: edited, content: 'a person wrote this\n' },
      });
      expect(response.status).toBe(202);
      const rest = await stream.rest();
      const result = oneEvent(rest, 'tool_call_result').data;
      expect(result).toMatchObject({ toolCallId: callId, isError: false });
      expect(rest.at(-1)!.data.status).toBe('completed');

      expect(existsSync(ws(asked))).toBe(false);
      expect(readFileSync(ws(edited), 'utf8')).toBe('a person wrote this\n');
      const tool = lastToolMessage(upstream.requests.at(-1)!);
      expect(tool!.tool_call_id).toBe(callId);
      expect(tool!.content).toMatch(/edited the arguments/i);
      expect(tool!.content).toContain('edited.txt');

      const [record] = await toolCallRecords(app.databaseUrl, runId);
      expect(record.approval).toMatchObject({
        approved: true,
        editedArguments: { path: edited, content: 'a person wrote this\n' },
      });
      expect(record.changes).toEqual([
        { path: edited, beforeSha256: null, afterSha256: sha256('a person wrote this\n') },
      ]);
    });

    it('answers 400 to invalid edited arguments and keeps the call waiting for a valid decision', async () => {
      const dir = folder('invalid-edit');
      const path = `${dir}/kept.txt`;
      upstream.enqueue(
        toolCalls([{ name: 'write_file', arguments: { path, content: 'original\n' } }]),
        text('Done.'),
      );
      const stream = await chat('write kept.txt');
      const { runId, callId } = await untilApproval(stream);

      for (const bad of [{ path }, { path: 42, content: 'x' }, { path, content: 'x', extra: true }]) {
        const response = await approve(runId, callId, { approve: true, arguments: bad });
        expect(response.status).toBe(400);
        expect(response.body).toMatchObject({ statusCode: 400 });
      }
      const run = await api(app.url, 'GET', `/v1/runs/${runId}`);
      expect(run.body.status).toBe('requires_action');
      expect(run.body.pendingToolCalls.map((c: any) => c.toolCallId)).toEqual([callId]);
      expect(existsSync(ws(path))).toBe(false);

      expect((await approve(runId, callId, { approve: true })).status).toBe(202);
      const rest = await stream.rest();
      expect(oneEvent(rest, 'tool_call_result').data).toMatchObject({ toolCallId: callId, isError: false });
      expect(rest.at(-1)!.data.status).toBe('completed');
      expect(readFileSync(ws(path), 'utf8')).toBe('original\n');
      expect(lastToolMessage(upstream.requests.at(-1)!)!.content).not.toMatch(/edited the arguments/i);
    });

    it('refuses an approved edit whose arguments lead outside the workspace', async () => {
      const dir = folder('edited-escape');
      const name = `edited-escape-${randomUUID()}.txt`;
      upstream.enqueue(
        toolCalls([{ name: 'write_file', arguments: { path: `${dir}/fine.txt`, content: 'fine\n' } }]),
        text('Ok.'),
      );
      const stream = await chat('write fine.txt');
      const { runId, callId } = await untilApproval(stream);
      const response = await approve(runId, callId, {
        approve: true,
        arguments: { path: join(outside, name), content: 'escaped\n' },
      });
      expect(response.status).toBe(202);
      const rest = await stream.rest();
      expect(oneEvent(rest, 'tool_call_result').data).toMatchObject({
        isError: true,
        errorCode: 'PERMISSION_DENIED',
      });
      expect(existsSync(join(outside, name))).toBe(false);
      expect(existsSync(ws(`${dir}/fine.txt`))).toBe(false);
    });

    it('does not run an approved edit when the file changed after the approval was asked for', async () => {
      const dir = folder('stale');
      const path = `${dir}/config.txt`;
      writeFileSync(ws(path), 'v1\n');
      upstream.enqueue(
        toolCalls([{ name: 'edit_file', arguments: { path, old_text: 'v1', new_text: 'model' } }]),
        text('Could not edit.'),
      );
      const stream = await chat('edit the config');
      const { runId, callId, events } = await untilApproval(stream);
      expect(events.at(-1)!.data.reason).toContain('+model');

      // Someone changes the file while the approval is pending; the person approves the diff they saw.
      writeFileSync(ws(path), 'v1\nlocal change\n');
      expect((await approve(runId, callId, { approve: true })).status).toBe(202);
      const result = oneEvent(await stream.rest(), 'tool_call_result');
      expect(result.data).toMatchObject({ toolCallId: callId, isError: true, errorCode: 'CONFLICT' });
      expect(readFileSync(ws(path), 'utf8')).toBe('v1\nlocal change\n');
    });
  });

  describe('write mode: write tools run without asking', () => {
    it('edits a file and a later read shows the edited text, keeping CRLF line endings', async () => {
      const dir = folder('edit-read');
      const path = `${dir}/greeting.txt`;
      writeFileSync(ws(path), 'hello world\r\nsecond line\r\n');
      upstream.enqueue(
        toolCalls([
          { name: 'edit_file', arguments: { path, old_text: 'hello world', new_text: 'hello there' } },
        ]),
        toolCalls([{ name: 'read_file', arguments: { path } }]),
        text('The greeting now says hello there.'),
      );
      const events = await (await chat('change the greeting', { mode: 'write' })).rest();

      expect(timeline(events)).toEqual([
        'run_started',
        'start:edit_file',
        'step_finished',
        'result:edit_file',
        'start:read_file',
        'step_finished',
        'result:read_file',
        'text',
        'step_finished',
        'done',
      ]);
      expect(eventsOfType(events, 'tool_approval_required')).toEqual([]);
      const [edit, read] = eventsOfType(events, 'tool_call_result').map((e) => e.data);
      expect(edit).toMatchObject({ name: 'edit_file', isError: false });
      expect(read).toMatchObject({
        name: 'read_file',
        isError: false,
        content: 'hello there\r\nsecond line\r\n',
      });
      expect(events.at(-1)!.data).toMatchObject({ status: 'completed', iterations: 3 });

      expect(readFileSync(ws(path), 'utf8')).toBe('hello there\r\nsecond line\r\n');
      const sent = toolMessagesOf(upstream.requests.at(-1)!);
      expect(sent.at(-1)!.content).toBe('hello there\r\nsecond line\r\n');
    });

    it('refuses paths that lead outside the workspace, absolute ones and symlinks out, writing nothing outside', async () => {
      const dir = folder('hostile');
      const tag = randomUUID().slice(0, 8);
      const escapeName = `escape-${tag}.txt`;
      const escapeTarget = join(dirname(app.workspace), escapeName);
      const absoluteTarget = join(outside, `absolute-${tag}.txt`);
      // A folder symlink, a file symlink to an existing outside file, a dangling symlink to an outside path.
      symlinkSync(outside, ws(`${dir}/linkdir`));
      writeFileSync(join(outside, `victim-${tag}.txt`), 'outside original\n');
      symlinkSync(join(outside, `victim-${tag}.txt`), ws(`${dir}/victim-link.txt`));
      symlinkSync(join(outside, `dangling-${tag}.txt`), ws(`${dir}/dangling-link.txt`));
      const calls = [
        { name: 'write_file', arguments: { path: `../${escapeName}`, content: 'escaped\n' } },
        { name: 'write_file', arguments: { path: `${dir}/../../${escapeName}`, content: 'escaped\n' } },
        { name: 'write_file', arguments: { path: absoluteTarget, content: 'escaped\n' } },
        {
          name: 'write_file',
          arguments: { path: `${dir}/linkdir/through-link-${tag}.txt`, content: 'escaped\n' },
        },
        {
          name: 'write_file',
          arguments: { path: `${dir}/victim-link.txt`, content: 'pwned\n', overwrite: true },
        },
        {
          name: 'edit_file',
          arguments: { path: `${dir}/victim-link.txt`, old_text: 'outside', new_text: 'pwned' },
        },
        { name: 'write_file', arguments: { path: `${dir}/dangling-link.txt`, content: 'escaped\n' } },
        { name: 'read_file', arguments: { path: '/etc/passwd' } },
      ];
      upstream.enqueue(toolCalls(calls), text('I could not reach those.'));
      const events = await (await chat('escape the workspace', { mode: 'write' })).rest();

      expect(events.at(-1)!.data).toMatchObject({ type: 'done', status: 'completed' });
      const results = eventsOfType(events, 'tool_call_result').map((e) => e.data);
      expect(results).toHaveLength(calls.length);
      for (const result of results) {
        expect(result).toMatchObject({ isError: true, errorCode: 'PERMISSION_DENIED' });
      }
      expect(results.map((r) => r.content).join('\n')).not.toContain('root:x:0:0');
      expect(existsSync(escapeTarget)).toBe(false);
      expect(existsSync(absoluteTarget)).toBe(false);
      expect(existsSync(join(outside, `through-link-${tag}.txt`))).toBe(false);
      expect(existsSync(join(outside, `dangling-${tag}.txt`))).toBe(false);
      expect(readFileSync(join(outside, `victim-${tag}.txt`), 'utf8')).toBe('outside original\n');
      expect(readdirSync(outside).sort()).toEqual([`victim-${tag}.txt`]);
      // The model was told about each refusal.
      const sent = toolMessagesOf(upstream.requests.at(-1)!);
      expect(sent).toHaveLength(calls.length);
    });

    it('replaces hard-linked workspace files without changing the outside files they share content with', async () => {
      const dir = folder('hardlinks');
      const tag = randomUUID().slice(0, 8);
      for (const n of [1, 2, 3]) {
        writeFileSync(join(outside, `shared-${tag}-${n}.txt`), 'outside original\n');
        linkSync(join(outside, `shared-${tag}-${n}.txt`), ws(`${dir}/hard${n}.txt`));
      }
      const patch = [
        `--- a/${dir}/hard3.txt`,
        `+++ b/${dir}/hard3.txt`,
        '@@ -1 +1 @@',
        '-outside original',
        '+patched',
        '',
      ].join('\n');
      upstream.enqueue(
        toolCalls([
          {
            name: 'write_file',
            arguments: { path: `${dir}/hard1.txt`, content: 'written\n', overwrite: true },
          },
          {
            name: 'edit_file',
            arguments: { path: `${dir}/hard2.txt`, old_text: 'outside original', new_text: 'edited' },
          },
          { name: 'apply_patch', arguments: { patch } },
        ]),
        text('Changed the three files.'),
      );
      const events = await (await chat('change the hard links', { mode: 'write' })).rest();
      for (const result of eventsOfType(events, 'tool_call_result')) expect(result.data.isError).toBe(false);
      expect(readFileSync(ws(`${dir}/hard1.txt`), 'utf8')).toBe('written\n');
      expect(readFileSync(ws(`${dir}/hard2.txt`), 'utf8')).toBe('edited\n');
      expect(readFileSync(ws(`${dir}/hard3.txt`), 'utf8')).toBe('patched\n');
      for (const n of [1, 2, 3]) {
        expect(readFileSync(join(outside, `shared-${tag}-${n}.txt`), 'utf8')).toBe('outside original\n');
      }
    });

    it('refuses an apply_patch that deletes a symlink pointing outside the workspace', async () => {
      const dir = folder('patch-delete-link');
      const target = join(outside, `delete-me-${randomUUID().slice(0, 8)}.txt`);
      writeFileSync(target, 'keep me\n');
      symlinkSync(target, ws(`${dir}/link.txt`));
      const patch = [`--- a/${dir}/link.txt`, '+++ /dev/null', '@@ -1 +0,0 @@', '-keep me', ''].join('\n');
      upstream.enqueue(toolCalls([{ name: 'apply_patch', arguments: { patch } }]), text('Refused.'));
      const events = await (await chat('delete the link', { mode: 'write' })).rest();
      const result = oneEvent(events, 'tool_call_result').data;
      expect(result.isError).toBe(true);
      expect(result.content).toContain('outside the workspace');
      expect(readFileSync(target, 'utf8')).toBe('keep me\n');
      expect(readdirSync(ws(dir))).toEqual(['link.txt']);
    });

    it('refuses an apply_patch whose second file does not apply, changing no file', async () => {
      const dir = folder('half-patch');
      writeFileSync(ws(`${dir}/one.txt`), 'alpha\nbeta\ngamma\n');
      writeFileSync(ws(`${dir}/two.txt`), 'red\ngreen\nblue\n');
      const patch = [
        `--- a/${dir}/one.txt`,
        `+++ b/${dir}/one.txt`,
        '@@ -1,3 +1,3 @@',
        ' alpha',
        '-beta',
        '+BETA',
        ' gamma',
        `--- a/${dir}/two.txt`,
        `+++ b/${dir}/two.txt`,
        '@@ -1,3 +1,3 @@',
        ' red',
        '-yellow',
        '+YELLOW',
        ' blue',
        '',
      ].join('\n');
      upstream.enqueue(toolCalls([{ name: 'apply_patch', arguments: { patch } }]), text('The patch failed.'));
      const events = await (await chat('apply this patch', { mode: 'write' })).rest();

      const result = oneEvent(events, 'tool_call_result').data;
      expect(result).toMatchObject({ name: 'apply_patch', isError: true, errorCode: 'CONFLICT' });
      expect(result.content).toContain('no file was changed');
      expect(result.content).toContain('two.txt');
      expect(readFileSync(ws(`${dir}/one.txt`), 'utf8')).toBe('alpha\nbeta\ngamma\n');
      expect(readFileSync(ws(`${dir}/two.txt`), 'utf8')).toBe('red\ngreen\nblue\n');
      expect(readdirSync(ws(dir)).sort()).toEqual(['one.txt', 'two.txt']);
      const [record] = await toolCallRecords(app.databaseUrl, events[0].data.runId);
      expect(record).toMatchObject({ status: 'error', error_code: 'CONFLICT', changes: null });
    });

    it('refuses a whole apply_patch when one of its files lies outside the workspace', async () => {
      const dir = folder('escape-patch');
      const name = `patched-${randomUUID().slice(0, 8)}.txt`;
      writeFileSync(ws(`${dir}/inside.txt`), 'one\ntwo\n');
      const patch = [
        `--- a/${dir}/inside.txt`,
        `+++ b/${dir}/inside.txt`,
        '@@ -1,2 +1,2 @@',
        ' one',
        '-two',
        '+TWO',
        '--- /dev/null',
        `+++ b/../${name}`,
        '@@ -0,0 +1 @@',
        '+escaped',
        '',
      ].join('\n');
      upstream.enqueue(toolCalls([{ name: 'apply_patch', arguments: { patch } }]), text('Refused.'));
      const events = await (await chat('apply this patch', { mode: 'write' })).rest();

      const result = oneEvent(events, 'tool_call_result').data;
      expect(result.isError).toBe(true);
      expect(result.content).toContain('no file was changed');
      expect(existsSync(join(dirname(app.workspace), name))).toBe(false);
      expect(readFileSync(ws(`${dir}/inside.txt`), 'utf8')).toBe('one\ntwo\n');
    });

    it('records each call with its file changes (sha256 before and after) in the store and the session', async () => {
      const dir = folder('changes');
      const path = `${dir}/file.txt`;
      writeFileSync(ws(`${dir}/doomed.txt`), 'bye\n');
      const deletion = [`--- a/${dir}/doomed.txt`, '+++ /dev/null', '@@ -1 +0,0 @@', '-bye', ''].join('\n');
      upstream.enqueue(
        toolCalls([{ name: 'write_file', arguments: { path, content: 'v1\n' } }]),
        toolCalls([{ name: 'edit_file', arguments: { path, old_text: 'v1', new_text: 'v2' } }]),
        toolCalls([{ name: 'apply_patch', arguments: { patch: deletion } }]),
        text('Created, edited, deleted.'),
      );
      const events = await (await chat('make changes', { mode: 'write' })).rest();
      expect(events.at(-1)!.data).toMatchObject({ status: 'completed', iterations: 4 });
      const runId = events[0].data.runId;
      const callIds = eventsOfType(events, 'tool_call_start').map((e) => e.data.toolCallId);

      const records = await toolCallRecords(app.databaseUrl, runId);
      expect(records.map((r) => [r.call_id, r.name, r.status, r.is_error, r.error_code])).toEqual([
        [callIds[0], 'write_file', 'completed', false, null],
        [callIds[1], 'edit_file', 'completed', false, null],
        [callIds[2], 'apply_patch', 'completed', false, null],
      ]);
      expect(records[0].changes).toEqual([{ path, beforeSha256: null, afterSha256: sha256('v1\n') }]);
      expect(records[1].changes).toEqual([
        { path, beforeSha256: sha256('v1\n'), afterSha256: sha256('v2\n') },
      ]);
      expect(records[2].changes).toEqual([
        { path: `${dir}/doomed.txt`, beforeSha256: sha256('bye\n'), afterSha256: null },
      ]);
      for (const [i, record] of records.entries()) {
        expect(record.result).toBe(eventsOfType(events, 'tool_call_result')[i].data.content);
      }
      expect(readFileSync(ws(path), 'utf8')).toBe('v2\n');
      expect(existsSync(ws(`${dir}/doomed.txt`))).toBe(false);

      // …and lists them per session.
      const listed = await api(app.url, 'GET', `/v1/sessions/${events[0].data.sessionId}/changes`);
      expect(listed.status).toBe(200);
      expect(
        listed.body.map((c: any) => [c.toolCallId, c.tool, c.path, c.beforeSha256, c.afterSha256]),
      ).toEqual([
        [callIds[0], 'write_file', path, null, sha256('v1\n')],
        [callIds[1], 'edit_file', path, sha256('v1\n'), sha256('v2\n')],
        [callIds[2], 'apply_patch', `${dir}/doomed.txt`, sha256('bye\n'), null],
      ]);

      // The session replays the same conversation: each assistant call followed by its tool message.
      const session = await api(app.url, 'GET', `/v1/sessions/${events[0].data.sessionId}`);
      const messages = session.body.messages;
      expect(messages.map((m: any) => m.role)).toEqual([
        'system',
        'user',
        'assistant',
        'tool',
        'assistant',
        'tool',
        'assistant',
        'tool',
        'assistant',
      ]);
      for (const [i, callId] of callIds.entries()) {
        const assistant = messages[2 + i * 2];
        const tool = messages[3 + i * 2];
        expect(assistant.toolCalls.map((c: any) => c.id)).toEqual([callId]);
        expect(tool.toolCallId).toBe(callId);
        expect(tool.content).toBe(records[i].result);
      }
    });
  });
});
