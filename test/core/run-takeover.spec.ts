import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from 'pg';
import type { SerializedEvent } from '../../src/events/run-events';
import { ToolRunner } from '../../src/tools/tool-runner.service';
import type { ToolResult } from '../../src/tools/tool';
import { connect } from '../support/database';
import { eventually } from '../support/eventually';
import { startCore, type CoreApp } from '../support/core-app';
import { answer, calls, gate, textUntil } from '../support/scripted-model';

const OWNER = 'tester';
const types = (events: SerializedEvent[]) =>
  events.map((e) => e.type).filter((type, i, all) => type !== 'text' || all[i - 1] !== 'text');
const body = (e: SerializedEvent) => JSON.parse(e.data) as Record<string, unknown>;

/**
 * Take-overs in one process: the run's lease is taken from under the process driving it (as if that
 * process had died: its writes no longer land), and this same process — the only one — takes the
 * run over once the lease has expired, as any replica would.
 */
describe('a run taken over from a lost process (RunTakeover, in-process)', () => {
  let core: CoreApp;
  let db: Client;

  beforeAll(async () => {
    core = await startCore({ RUN_LEASE_MS: '1000' });
    db = await connect(core.databaseUrl);
  });
  afterAll(async () => {
    await db.end();
    await core.close();
  });
  beforeEach(() => core.model.reset());

  /** The run's process is lost: its lease belongs to nobody alive and has expired. */
  const loseProcess = (runId: string) =>
    db.query(
      `UPDATE runs SET lease_owner = 'a-process-that-died', lease_expires_at = now() - interval '1 second' WHERE id = $1`,
      [runId],
    );
  const statusOf = async (runId: string) =>
    ((await db.query(`SELECT status FROM runs WHERE id = $1`, [runId])).rows[0] as { status: string }).status;
  const messagesOf = async (runId: string) =>
    (
      await db.query(
        `SELECT role, content, tool_call_id AS "toolCallId" FROM messages WHERE run_id = $1 ORDER BY seq`,
        [runId],
      )
    ).rows as { role: string; content: string | null; toolCallId: string | null }[];

  it('a model call cut at the last step the cap allows ends the run max_iterations, its text the answer', async () => {
    const held = gate();
    core.model.enqueue(textUntil(held.opened, ['cut short '], ['never shown']));
    const { runId } = await core.runs.start(OWNER, { prompt: 'go', session: { maxIterations: 1 } });
    await core.follow(runId, (e) => e.type === 'text');
    await loseProcess(runId);
    await eventually(async () => (await statusOf(runId)) === 'max_iterations');
    held.open();

    const seen = await core.follow(runId);
    expect(types(seen)).toEqual(['run_started', 'text', 'step_finished', 'done']);
    expect(body(seen[2])).toMatchObject({ iteration: 1, finishReason: 'interrupted' });
    const messages = await messagesOf(runId);
    expect(messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'go'],
      ['assistant', 'cut short '],
    ]);
    expect(body(seen[3])).toMatchObject({ status: 'max_iterations', iterations: 1 });
    expect(core.model.requests).toHaveLength(1);
  });

  it('calls that had started: the read runs again, the write is answered INTERRUPTED and never runs twice', async () => {
    writeFileSync(join(core.workspace, 'input.txt'), 'input\n');
    const runner = core.module.get(ToolRunner);
    const run = runner.run.bind(runner);
    const ran: string[] = [];
    // The lost process's calls start and never finish (until its run is stopped); later ones run.
    const spy = jest.spyOn(runner, 'run').mockImplementation(async (tool, args, ctx) => {
      ran.push(tool.name);
      if (ran.length > 2) return run(tool, args, ctx);
      return new Promise<ToolResult>((resolve) =>
        ctx.parentSignal?.addEventListener('abort', () =>
          resolve({ content: 'stopped', isError: true, errorCode: 'CANCELLED' }),
        ),
      );
    });
    try {
      core.model.enqueue(
        calls(
          { name: 'read_file', arguments: { path: 'input.txt' } },
          { name: 'write_file', arguments: { path: 'output.txt', content: 'x' } },
        ),
        answer('I cannot tell whether output.txt was written.'),
      );
      const { runId } = await core.runs.start(OWNER, { prompt: 'copy', session: { mode: 'write' } });
      await eventually(() => ran.length === 2);
      await loseProcess(runId);
      await eventually(async () => (await statusOf(runId)) === 'completed');

      const seen = await core.follow(runId);
      expect(seen.map((e) => e.seq)).toEqual(seen.map((_, i) => i + 1));
      expect(types(seen)).toEqual([
        'run_started',
        'tool_call_start',
        'tool_call_start',
        'step_finished',
        'tool_call_result',
        'run_resumed',
        'tool_call_result',
        'text',
        'step_finished',
        'done',
      ]);
      expect(body(seen[4])).toMatchObject({
        name: 'write_file',
        isError: true,
        errorCode: 'INTERRUPTED',
        content: 'the server stopped while this ran; whether it had an effect is unknown',
      });
      // No model call was cut: the next step is the second.
      expect(body(seen[5])).toMatchObject({ reason: 'process_lost', iteration: 2 });
      expect(body(seen[6])).toMatchObject({ name: 'read_file', isError: false, content: 'input\n' });
      expect(ran).toEqual(['read_file', 'write_file', 'read_file']);
      expect(existsSync(join(core.workspace, 'output.txt'))).toBe(false);
      // The model got every call answered, in the order it asked.
      expect(core.model.requests[1].messages.slice(-3)).toEqual([
        expect.objectContaining({ role: 'assistant' }),
        expect.objectContaining({ role: 'tool', content: 'input\n' }),
        expect.objectContaining({
          role: 'tool',
          content: 'the server stopped while this ran; whether it had an effect is unknown',
        }),
      ]);
    } finally {
      spy.mockRestore();
    }
  });
});
