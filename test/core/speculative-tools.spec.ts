import type { Client } from 'pg';
import { ModelError } from '../../src/llm/model-provider';
import type { Tool, ToolResult } from '../../src/tools/tool';
import { ToolRegistry } from '../../src/tools/tool-registry.service';
import { connect } from '../support/database';
import { eventually } from '../support/eventually';
import { startCore, type CoreApp } from '../support/core-app';
import { answer, streamedCalls, type ModelScript } from '../support/scripted-model';

const OWNER = 'tester';

/** One run of a probe: what it was given, and whether its call was stored when it started. */
interface ProbeRun {
  path: unknown;
  toolCallId: string;
  signal: AbortSignal;
  callStored: boolean;
}

/**
 * The speculative-read contract (Tool.speculative), checked on tools of kind `read` that differ only
 * by the flag: `peek` has it, `look` does not (as an MCP tool marked read-only).
 */
describe('speculative tools: only a tool that declares it runs before its call is decided or stored', () => {
  let core: CoreApp;
  let db: Client;
  const runs = new Map<string, ProbeRun[]>();

  function probe(name: string, speculative: boolean): Tool {
    runs.set(name, []);
    return {
      name,
      description: `Reads nothing; answers with its path (${name}).`,
      kind: 'read',
      parameters: {
        type: 'object',
        properties: { path: { type: 'string' } },
        required: ['path'],
        additionalProperties: false,
      },
      ...(speculative ? { speculative: true } : {}),
      async execute(args, ctx): Promise<ToolResult> {
        const stored = await db.query(`SELECT 1 FROM tool_calls WHERE call_id = $1`, [ctx.toolCallId]);
        runs.get(name)!.push({
          path: args.path,
          toolCallId: ctx.toolCallId,
          signal: ctx.signal,
          callStored: stored.rows.length > 0,
        });
        return { content: `${name} ${String(args.path)}` };
      },
    };
  }

  beforeAll(async () => {
    core = await startCore();
    db = await connect(core.databaseUrl);
    const registry = core.module.get(ToolRegistry);
    registry.register(probe('peek', true));
    registry.register(probe('look', false));
  });
  afterAll(async () => {
    await db.end();
    await core.close();
  });
  beforeEach(() => {
    core.model.reset();
    for (const list of runs.values()) list.length = 0;
  });

  const ranBefore = (name: string, count: number) => () =>
    eventually(() => runs.get(name)!.length >= count, 5_000);
  const toolResults = () =>
    core.model.requests[1].messages.filter((m) => m.role === 'tool').map((m) => m.content);

  it('a tool without the flag never starts while the model streams: it runs once, after its call is stored', async () => {
    let whileStreaming = -1;
    core.model.enqueue(
      streamedCalls([{ name: 'look', arguments: { path: 'a' } }], async () => {
        // Several ticks with the call's arguments whole: time for an early start, which must not come.
        for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
        whileStreaming = runs.get('look')!.length;
      }),
      answer('Done.'),
    );
    const { runId } = await core.runs.start(OWNER, { prompt: 'look' });
    const seen = await core.follow(runId);
    expect(seen.at(-1)?.type).toBe('done');
    expect(whileStreaming).toBe(0);
    expect(runs.get('look')).toEqual([expect.objectContaining({ path: 'a', callStored: true })]);
    expect(toolResults()).toEqual(['look a']);
  });

  it('a tool with the flag starts while the model streams, before its call is stored, under the upstream’s id', async () => {
    let upstreamId = '';
    const script: ModelScript = async function* (request, signal) {
      for await (const event of streamedCalls(
        [{ name: 'peek', arguments: { path: 'a' } }],
        ranBefore('peek', 1),
      )(request, signal)) {
        if (event.type === 'tool_call_delta' && event.id !== undefined) upstreamId = event.id;
        yield event;
      }
    };
    core.model.enqueue(script, answer('Done.'));
    const { runId } = await core.runs.start(OWNER, { prompt: 'peek' });
    const seen = await core.follow(runId);
    expect(seen.at(-1)?.type).toBe('done');
    // Started before the model finished (the script waited for it), taken by its step: run once.
    expect(runs.get('peek')).toEqual([
      expect.objectContaining({ path: 'a', toolCallId: upstreamId, callStored: false }),
    ]);
    expect(toolResults()).toEqual(['peek a']);
  });

  it('may run twice for one call: the early run is discarded (aborted) when the final arguments differ', async () => {
    core.model.enqueue(
      streamedCalls(
        [{ name: 'peek', arguments: { path: 'a' }, finalArguments: { path: 'b' } }],
        ranBefore('peek', 1),
      ),
      answer('Done.'),
    );
    const { runId } = await core.runs.start(OWNER, { prompt: 'peek' });
    const seen = await core.follow(runId);
    expect(seen.at(-1)?.type).toBe('done');
    const [early, step] = runs.get('peek')!;
    expect(runs.get('peek')).toHaveLength(2);
    expect(early).toMatchObject({ path: 'a', callStored: false });
    expect(early.signal.aborted).toBe(true);
    expect(step.path).toBe('b');
    // The model is given the run of the call it finally asked for, and only that one is stored.
    expect(toolResults()).toEqual(['peek b']);
    const stored = await db.query(`SELECT result FROM tool_calls WHERE run_id = $1`, [runId]);
    expect(stored.rows).toEqual([{ result: 'peek b' }]);
  });

  it('an early run is discarded when its model call fails: nothing of it is stored or streamed', async () => {
    const script: ModelScript = async function* (request, signal) {
      const started = ranBefore('peek', 1);
      yield { type: 'tool_call_delta', index: 0, id: 'call_doomed', name: 'peek' };
      yield { type: 'tool_call_delta', index: 0, argumentsDelta: '{"path":"a"}' };
      await started();
      void request;
      void signal;
      throw new ModelError('UPSTREAM_ERROR', 'the upstream failed mid-step', false);
    };
    core.model.enqueue(script);
    const { runId } = await core.runs.start(OWNER, { prompt: 'peek' });
    const seen = await core.follow(runId);
    expect(seen.at(-1)?.type).toBe('error');
    expect(runs.get('peek')).toEqual([expect.objectContaining({ path: 'a', callStored: false })]);
    expect(runs.get('peek')![0].signal.aborted).toBe(true);
    expect(seen.map((e) => e.type)).not.toContain('tool_call_result');
    expect((await db.query(`SELECT 1 FROM tool_calls WHERE run_id = $1`, [runId])).rows).toEqual([]);
  });
});
