import { EarlyReads, type TimedResult, type WholeCall } from '../../src/agent/early-reads';

/** A starter that records what it was asked to start, and answers every read with its path. */
function recorder(refuse: (call: WholeCall) => boolean = () => false) {
  const started: { call: WholeCall; signal: AbortSignal }[] = [];
  const start = (call: WholeCall, signal: AbortSignal): Promise<TimedResult> | null => {
    if (refuse(call)) return null;
    started.push({ call, signal });
    return Promise.resolve({ result: { content: String(call.args.path) }, durationMs: 1 });
  };
  return { started, start };
}

const delta = (index: number, fields: { id?: string; name?: string; argumentsDelta?: string }) =>
  ({ type: 'tool_call_delta', index, ...fields }) as const;

describe('EarlyReads: a call starts once its arguments are whole', () => {
  it('starts a call when its streamed arguments become one JSON object, not before', async () => {
    const { started, start } = recorder();
    const early = new EarlyReads(start, new AbortController().signal);
    early.see(delta(0, { id: 'call_1', name: 'read_file', argumentsDelta: '{"pa' }));
    early.see(delta(0, { argumentsDelta: 'th":"a}' }));
    expect(started).toHaveLength(0); // ends with a brace, but is not whole yet
    early.see(delta(0, { argumentsDelta: '.txt"}' }));
    expect(started.map((s) => s.call)).toEqual([
      {
        name: 'read_file',
        rawArguments: '{"path":"a}.txt"}',
        args: { path: 'a}.txt' },
        upstreamId: 'call_1',
      },
    ]);
    // What comes after is not looked at, and the step runs that call itself (the text differs).
    early.see(delta(0, { argumentsDelta: ' ' }));
    expect(started).toHaveLength(1);
    expect(early.take('read_file', '{"path":"a}.txt"} ')).toBeUndefined();
    await expect(early.take('read_file', '{"path":"a}.txt"}')).resolves.toMatchObject({
      result: { content: 'a}.txt' },
    });
  });

  it('follows several calls by index; each is taken once, by its exact name and text', async () => {
    const { started, start } = recorder();
    const early = new EarlyReads(start, new AbortController().signal);
    early.see(delta(0, { name: 'read_file', argumentsDelta: '{"path":"a"' }));
    early.see(delta(1, { name: 'read_file', argumentsDelta: '{"path":"b"}' }));
    early.see(delta(0, { argumentsDelta: '}' }));
    expect(started.map((s) => s.call.args.path)).toEqual(['b', 'a']);
    expect(early.take('glob', '{"path":"a"}')).toBeUndefined();
    expect(early.take('read_file', '{"path":"a"}')).toBeDefined();
    expect(early.take('read_file', '{"path":"a"}')).toBeUndefined();
    expect(early.take('read_file', '{"path":"b"}')).toBeDefined();
  });

  it('starts nothing the starter refuses, without a name, or with arguments too long to watch', () => {
    const { started, start } = recorder((call) => call.name === 'write_file');
    const early = new EarlyReads(start, new AbortController().signal);
    early.see(delta(0, { name: 'write_file', argumentsDelta: '{"path":"a","content":"x"}' }));
    early.see(delta(1, { argumentsDelta: '{"path":"a"}' }));
    early.see(delta(2, { name: 'read_file', argumentsDelta: `{"path":"${'x'.repeat(5000)}"` }));
    early.see(delta(2, { argumentsDelta: '}' }));
    early.see(delta(3, { name: 'read_file', argumentsDelta: '["a"]' }));
    expect(started).toEqual([]);
    expect(early.take('write_file', '{"path":"a","content":"x"}')).toBeUndefined();
  });

  it('stop aborts the reads still running; the run stopping aborts them too', () => {
    const run = new AbortController();
    const { started, start } = recorder();
    const early = new EarlyReads(start, run.signal);
    early.see(delta(0, { name: 'read_file', argumentsDelta: '{"path":"a"}' }));
    early.see(delta(1, { name: 'read_file', argumentsDelta: '{"path":"b"}' }));
    expect(started.map((s) => s.signal.aborted)).toEqual([false, false]);
    run.abort();
    expect(started.map((s) => s.signal.aborted)).toEqual([true, true]);

    const other = new EarlyReads(start, new AbortController().signal);
    other.see(delta(0, { name: 'read_file', argumentsDelta: '{"path":"c"}' }));
    other.stop();
    expect(started[2].signal.aborted).toBe(true);
    expect(other.take('read_file', '{"path":"c"}')).toBeUndefined();
  });

  it('a read that fails is not an unhandled rejection when nobody takes it', async () => {
    const stray: unknown[] = [];
    const onStray = (reason: unknown) => stray.push(reason);
    process.on('unhandledRejection', onStray);
    try {
      const early = new EarlyReads(() => Promise.reject(new Error('boom')), new AbortController().signal);
      early.see(delta(0, { name: 'read_file', argumentsDelta: '{"path":"a"}' }));
      early.stop();
      await new Promise((resolve) => setImmediate(resolve));
      expect(stray).toEqual([]);
    } finally {
      process.off('unhandledRejection', onStray);
    }
  });
});
