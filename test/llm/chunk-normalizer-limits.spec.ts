import { ChunkNormalizer, type ChunkNormalizerOptions } from '../../src/llm/chunk-normalizer';
import type { ModelStreamEvent } from '../../src/llm/model-provider';
import { utf8Prefix } from '../../src/llm/stream-budget';

type Finish = Extract<ModelStreamEvent, { type: 'finish' }>;

const FFFD = '\uFFFD';

/** Pushes chunks until the normalizer says it is cut (as the provider does), then ends it. */
function run(chunks: unknown[], options?: ChunkNormalizerOptions) {
  const normalizer = new ChunkNormalizer(options);
  const events: ModelStreamEvent[] = [];
  let pushed = 0;
  for (const chunk of chunks) {
    if (normalizer.cut) break;
    normalizer.push(chunk, events);
    pushed++;
  }
  normalizer.end(events);
  const finish = events.at(-1) as Finish;
  const text = events.flatMap((e) => (e.type === 'text' ? [e.delta] : [])).join('');
  const reasoning = events.flatMap((e) => (e.type === 'reasoning' ? [e.delta] : [])).join('');
  return { events, finish, text, reasoning, pushed, cut: normalizer.cut };
}

function chunk(delta: object, finishReason: string | null = null): object {
  return { choices: [{ index: 0, delta, finish_reason: finishReason }] };
}

const content = (text: string) => chunk({ content: text });

describe('ChunkNormalizer: text PostgreSQL cannot hold', () => {
  it('replaces U+0000 and lone surrogates in text and reasoning with U+FFFD', () => {
    const r = run([
      chunk({ reasoning_content: 'think\u0000\udc00' }),
      content('a\u0000b'),
      content('\ud800c'),
      chunk({}, 'stop'),
    ]);
    expect(r.text).toBe(`a${FFFD}b${FFFD}c`);
    expect(r.reasoning).toBe(`think${FFFD}${FFFD}`);
  });

  it('keeps a surrogate pair split across two deltas whole, and ends a dangling high surrogate as U+FFFD', () => {
    expect(run([content('x\ud83d'), content('\ude00y'), chunk({}, 'stop')]).text).toBe('x😀y');
    expect(run([content('end\ud83d'), chunk({}, 'stop')]).text).toBe(`end${FFFD}`);
  });

  it('makes tool-call names and the assembled arguments storable, judging a split pair whole (an id with U+0000 is replaced)', () => {
    const r = run([
      chunk({
        tool_calls: [
          { index: 0, id: 'call\u0000', function: { name: 'f\ud800', arguments: '{"a":"\u0000' } },
        ],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '\ud83d' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '\ude00"}' } }] }),
      chunk({}, 'tool_calls'),
    ]);
    expect(r.finish.toolCalls).toEqual([
      { id: expect.stringMatching(/^call_[0-9a-f]{24}$/), name: `f${FFFD}`, arguments: `{"a":"${FFFD}😀"}` },
    ]);
  });

  it('keeps provider data storable, and drops it when nested beyond 64 levels', () => {
    const deep = JSON.parse(`${'{"k":'.repeat(100)}1${'}'.repeat(100)}`) as object;
    const r = run([
      chunk({
        tool_calls: [
          { index: 0, id: 'c1', function: { name: 'f', arguments: '{}' }, extra_content: { sig: 'x\u0000' } },
          { index: 1, id: 'c2', function: { name: 'g', arguments: '{}' }, extra_content: deep },
        ],
      }),
      chunk({}, 'tool_calls'),
    ]);
    expect(r.finish.toolCalls[0].extraContent).toEqual({ sig: `x${FFFD}` });
    expect(r.finish.toolCalls[1]).not.toHaveProperty('extraContent');
  });

  it('serialises object-valued arguments of any depth (JSON.stringify would overflow the stack)', () => {
    const text = `${'{"k":'.repeat(20_000)}1${'}'.repeat(20_000)}`;
    const r = run([
      chunk({
        tool_calls: [{ index: 0, id: 'c', function: { name: 'f', arguments: JSON.parse(text) as object } }],
      }),
      chunk({}, 'tool_calls'),
    ]);
    expect(r.finish.toolCalls[0].arguments).toBe(text);
  });
});

describe('ChunkNormalizer: what one model call may hold', () => {
  it('cuts the delta that crosses answerMaxBytes at a character boundary, and finishes length without tool calls', () => {
    const r = run([content('abc'), content('dé😀f'), content('never read'), chunk({}, 'stop')], {
      answerMaxBytes: 8,
    });
    // abc (3) + d (1) + é (2) = 6; 😀 (4) would make 10.
    expect(r.text).toBe('abcdé');
    expect(r.cut).toBe(true);
    expect(r.pushed).toBe(2);
    expect(r.finish).toMatchObject({ finishReason: 'length', toolCalls: [] });
  });

  it('does not cut an answer of exactly answerMaxBytes', () => {
    const r = run([content('abcd'), chunk({}, 'stop')], { answerMaxBytes: 4 });
    expect(r.text).toBe('abcd');
    expect(r.finish.finishReason).toBe('stop');
  });

  it('counts bytes of the storable text: U+0000 counts as U+FFFD (3 bytes)', () => {
    expect(run([content('a\u0000b'), chunk({}, 'stop')], { answerMaxBytes: 4 }).text).toBe(`a${FFFD}`);
  });

  it('drops the calls streamed before a cut: a cut answer is not acted on', () => {
    const r = run(
      [
        chunk({ tool_calls: [{ index: 0, id: 'c', function: { name: 'f', arguments: '{}' } }] }),
        content('x'.repeat(20)),
        chunk({}, 'tool_calls'),
      ],
      { answerMaxBytes: 10 },
    );
    expect(r.finish).toMatchObject({ finishReason: 'length', toolCalls: [] });
  });

  it('cuts at the arguments limit, counting all calls of the step together: the calls before are kept, the one that crossed is refused with {}', () => {
    const call = (index: number, args: string) =>
      chunk({ tool_calls: [{ index, id: `c${index}`, function: { name: 'f', arguments: args } }] });
    const r = run(
      [call(0, '{"a":"12345"}'), call(1, '{"b":"12345"}'), call(2, '{}'), chunk({}, 'tool_calls')],
      { toolArgumentsMaxChars: 20 },
    );
    expect(r.cut).toBe(true);
    expect(r.pushed).toBe(2);
    expect(r.finish.finishReason).toBe('length');
    expect(r.finish.toolCalls).toEqual([
      { id: 'c0', name: 'f', arguments: '{"a":"12345"}' },
      { id: 'c1', name: 'f', arguments: '{}', argumentsRefused: expect.stringContaining('20 characters') },
    ]);
  });

  it('refuses a call whose arguments stream past the limit fragment by fragment, and reads no further', () => {
    const piece = (args: string) => chunk({ tool_calls: [{ index: 0, function: { arguments: args } }] });
    const r = run(
      [
        content('Writing it.'),
        chunk({ tool_calls: [{ index: 0, id: 'c0', function: { name: 'write_file', arguments: '' } }] }),
        ...Array.from({ length: 100 }, () => piece('x'.repeat(10))),
        chunk({}, 'tool_calls'),
      ],
      { toolArgumentsMaxChars: 95 },
    );
    expect(r.pushed).toBe(12);
    expect(r.text).toBe('Writing it.');
    expect(r.finish.toolCalls).toEqual([
      {
        id: 'c0',
        name: 'write_file',
        arguments: '{}',
        argumentsRefused: expect.stringMatching(/passed 95 characters/),
      },
    ]);
  });

  it('refuses an Anthropic tool_use whose input_json_delta or preset input passes the limit', () => {
    const start = (index: number, id: string, input: object = {}) => ({
      type: 'content_block_start',
      index,
      content_block: { type: 'tool_use', id, name: 'f', input },
    });
    const delta = (index: number, json: string) => ({
      type: 'content_block_delta',
      index,
      delta: { type: 'input_json_delta', partial_json: json },
    });
    const streamed = run([start(0, 'tu0'), delta(0, '{"a":'), delta(0, '"' + 'y'.repeat(50) + '"}')], {
      toolArgumentsMaxChars: 20,
    });
    expect(streamed.finish.toolCalls).toEqual([
      { id: 'tu0', name: 'f', arguments: '{}', argumentsRefused: expect.any(String) },
    ]);
    const preset = run([start(0, 'tu1', { a: 'z'.repeat(50) })], { toolArgumentsMaxChars: 20 });
    expect(preset.finish.toolCalls).toEqual([
      { id: 'tu1', name: 'f', arguments: '{}', argumentsRefused: expect.any(String) },
    ]);
  });

  it('keeps the default arguments limit at 4 Mi characters: a call of 4 Mi + 1 is refused', () => {
    const big = 'x'.repeat(4 * 1024 * 1024);
    const r = run([
      chunk({ tool_calls: [{ index: 0, id: 'c0', function: { name: 'f', arguments: '{"a":"' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: big } }] }),
      chunk({}, 'tool_calls'),
    ]);
    expect(r.finish.toolCalls[0]).toMatchObject({
      arguments: '{}',
      argumentsRefused: expect.stringMatching(/4,194,304/),
    });
  });

  it('cuts at the reasoning limit', () => {
    const think = (t: string) => chunk({ reasoning_content: t });
    const r = run([think('12345'), think('67890'), think('more'), chunk({}, 'stop')], {
      reasoningMaxChars: 8,
    });
    expect(r.reasoning).toBe('12345');
    expect(r.finish.finishReason).toBe('length');
  });

  it('bounds a <tool_call> block held back by text recovery by the arguments limit', () => {
    const r = run(
      [
        content('Sure. <tool_call>{"name":"f","arguments":{"x":"'),
        content('y'.repeat(100)),
        chunk({}, 'stop'),
      ],
      { recoverToolCallsFromText: true, toolArgumentsMaxChars: 64 },
    );
    expect(r.text).toBe('Sure. ');
    expect(r.finish).toMatchObject({ finishReason: 'length', toolCalls: [] });
  });
});

describe('utf8Prefix', () => {
  it('never splits a character, a surrogate pair included', () => {
    expect(utf8Prefix('a😀b', 1)).toBe('a');
    expect(utf8Prefix('a😀b', 4)).toBe('a');
    expect(utf8Prefix('a😀b', 5)).toBe('a😀');
    expect(utf8Prefix('éé', 3)).toBe('é');
    expect(utf8Prefix('€', 2)).toBe('');
    expect(utf8Prefix('abc', 0)).toBe('');
  });
});
