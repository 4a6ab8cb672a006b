import { ChunkNormalizer, type ChunkNormalizerOptions } from '../../src/llm/chunk-normalizer';
import type { ModelStreamEvent } from '../../src/llm/model-provider';

type Finish = Extract<ModelStreamEvent, { type: 'finish' }>;

function normalize(chunks: unknown[], options?: ChunkNormalizerOptions) {
  const normalizer = new ChunkNormalizer(options);
  const events: ModelStreamEvent[] = [];
  for (const chunk of chunks) normalizer.push(chunk, events);
  const finished = normalizer.finished;
  normalizer.end(events);
  const finish = events[events.length - 1] as Finish;
  const text = events.flatMap((e) => (e.type === 'text' ? [e.delta] : [])).join('');
  const reasoning = events.flatMap((e) => (e.type === 'reasoning' ? [e.delta] : [])).join('');
  return { events, finished, finish, text, reasoning, calls: finish.toolCalls };
}

/** An OpenAI chunk with one choice. */
function chunk(delta: object, finishReason?: string | null, extra: object = {}): object {
  const choice: Record<string, unknown> = { index: 0, delta };
  if (finishReason !== undefined) choice.finish_reason = finishReason;
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [choice],
    ...extra,
  };
}

function call(fields: object): object {
  return chunk({ tool_calls: [fields] }, null);
}

describe('ChunkNormalizer, OpenAI chunks', () => {
  it('streams content deltas as text events in order and finishes with the finish_reason as received', () => {
    const r = normalize([
      chunk({ role: 'assistant', content: '' }, null),
      chunk({ content: 'Hel' }, null),
      chunk({ content: 'lo' }, null),
      chunk({}, 'stop'),
    ]);
    expect(r.events).toEqual([
      { type: 'text', delta: 'Hel' },
      { type: 'text', delta: 'lo' },
      {
        type: 'finish',
        finishReason: 'stop',
        usage: { promptTokens: 0, completionTokens: 0 },
        toolCalls: [],
        responseId: 'chatcmpl-1',
      },
    ]);
  });

  it('is not finished while finish_reason is null or absent', () => {
    expect(normalize([chunk({ content: 'a' }, null), chunk({ content: 'b' })]).finished).toBe(false);
    expect(normalize([chunk({ content: 'a' }), chunk({}, 'length')]).finished).toBe(true);
  });

  it('emits no text for content "" or null next to tool calls, with role on every chunk', () => {
    const r = normalize([
      chunk(
        {
          role: 'assistant',
          content: '',
          tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
        null,
      ),
      chunk({ role: 'assistant', content: null }, 'tool_calls'),
    ]);
    expect(r.events.filter((e) => e.type === 'text')).toEqual([]);
    expect(r.calls).toEqual([{ id: 'c1', name: 'f', arguments: '{}' }]);
  });

  it.each([
    ['only on the first fragment', [undefined, undefined]],
    ['on every fragment', ['c1', 'c1']],
    ['as "" on continuations', ['', '']],
    ['as null on continuations', [null, null]],
  ])('assembles one call when the id comes %s', (_how, continuationIds) => {
    const r = normalize([
      call({ index: 0, id: 'c1', type: 'function', function: { name: 'weather', arguments: '' } }),
      call({ index: 0, id: continuationIds[0], function: { arguments: '{"location": ' } }),
      call({ index: 0, id: continuationIds[1], type: 'function', function: { arguments: '"Paris"}' } }),
      chunk({}, 'tool_calls'),
    ]);
    expect(r.calls).toEqual([{ id: 'c1', name: 'weather', arguments: '{"location": "Paris"}' }]);
  });

  it('handles a whole call in one chunk without index or id, finish_reason on the same chunk', () => {
    const r = normalize([
      {
        choices: [
          {
            delta: {
              role: 'assistant',
              tool_calls: [
                {
                  function: { arguments: '{"location":"Tokyo"}', name: 'get_current_weather' },
                  id: '',
                  type: 'function',
                },
              ],
            },
            finish_reason: 'tool_calls',
            index: 0,
          },
        ],
      },
    ]);
    expect(r.calls).toEqual([
      { id: expect.stringMatching(/^call_/), name: 'get_current_weather', arguments: '{"location":"Tokyo"}' },
    ]);
    expect(r.finish.finishReason).toBe('tool_calls');
  });

  it('maps tool-call index 1 (after a text block) to the first call', () => {
    const r = normalize([
      chunk({ content: 'Reading it.' }, null),
      call({ index: 1, id: 'toolu_1', type: 'function', function: { name: 'read_file', arguments: '' } }),
      call({ index: 1, function: { arguments: '' } }),
      call({ index: 1, function: { arguments: '{"path": "a.txt"}' } }),
      chunk({}, 'tool_calls'),
    ]);
    expect(r.text).toBe('Reading it.');
    expect(r.calls).toEqual([{ id: 'toolu_1', name: 'read_file', arguments: '{"path": "a.txt"}' }]);
  });

  it('splits several calls that all claim index 0 but carry different ids', () => {
    const r = normalize([
      call({ index: 0, id: 'call_a', function: { name: 'read', arguments: '{"path": "a.rs"}' } }),
      call({ index: 0, id: 'call_b', function: { name: 'read', arguments: '{"path": "b.rs"}' } }),
      chunk({}, 'tool_calls'),
    ]);
    expect(r.calls.map((c) => [c.id, c.arguments])).toEqual([
      ['call_a', '{"path": "a.rs"}'],
      ['call_b', '{"path": "b.rs"}'],
    ]);
  });

  it('never lets name "" on a continuation overwrite the name', () => {
    const r = normalize([
      call({
        id: 'chatcmpl-tool-1',
        type: 'function',
        function: { name: 'webSearchTool', arguments: '' },
        index: 0,
      }),
      call({ type: 'function', function: { name: '', arguments: '{"query": "x"}' }, index: 0 }),
      { choices: [{ index: 0, delta: { index: 0, content: '' }, finish_reason: 'tool_calls' }] },
    ]);
    expect(r.calls).toEqual([{ id: 'chatcmpl-tool-1', name: 'webSearchTool', arguments: '{"query": "x"}' }]);
  });

  it('does not duplicate a call on a trailing empty-arguments fragment that shares the finish chunk', () => {
    const r = normalize([
      call({ id: 'c1', type: 'function', index: 0, function: { name: 'search' } }),
      call({ index: 0, function: { arguments: '{"q": "ai"}' } }),
      {
        choices: [
          {
            index: 0,
            delta: { tool_calls: [{ index: 0, function: { arguments: '' } }] },
            finish_reason: 'tool_calls',
            stop_reason: 128008,
          },
        ],
      },
    ]);
    expect(r.calls).toEqual([{ id: 'c1', name: 'search', arguments: '{"q": "ai"}' }]);
  });

  it('stringifies arguments that arrive as an already-parsed object', () => {
    const r = normalize([
      call({ index: 0, id: 'c1', function: { name: 'run', arguments: { command: 'ls', flags: ['-l'] } } }),
      chunk({}, 'tool_calls'),
    ]);
    expect(r.calls).toEqual([{ id: 'c1', name: 'run', arguments: '{"command":"ls","flags":["-l"]}' }]);
  });

  it('returns the calls even when finish_reason is "stop", and keeps "stop"', () => {
    const r = normalize([
      call({ index: 0, id: 'c1', function: { name: 'f', arguments: '{}' } }),
      chunk({}, 'stop'),
    ]);
    expect(r.finish.finishReason).toBe('stop');
    expect(r.calls).toHaveLength(1);
  });

  it('streams reasoning_content and reasoning as reasoning events, never text', () => {
    const r = normalize([
      chunk({ role: 'assistant', content: null, reasoning_content: '' }, null),
      chunk({ content: null, reasoning_content: 'Think' }, null),
      chunk({ reasoning: 'ing.' }, null),
      chunk({ content: 'Answer', reasoning_content: null }, 'stop'),
    ]);
    expect(r.reasoning).toBe('Thinking.');
    expect(r.text).toBe('Answer');
  });

  it('reads content given as parts: thinking parts are reasoning, text parts are text', () => {
    const r = normalize([
      chunk({ content: [{ type: 'thinking', thinking: [{ type: 'text', text: 'hmm' }] }] }, null),
      chunk({ content: [{ type: 'text', text: 'Yes' }] }, 'stop'),
    ]);
    expect(r.reasoning).toBe('hmm');
    expect(r.text).toBe('Yes');
  });

  it('shows a refusal as text', () => {
    expect(normalize([chunk({ refusal: 'I cannot help with that.' }, 'stop')]).text).toBe(
      'I cannot help with that.',
    );
  });

  describe('usage', () => {
    it('reads a final usage chunk with choices: [] (and never indexes choices[0] blindly)', () => {
      const r = normalize([
        chunk({ content: 'a' }, 'stop'),
        { choices: [], usage: { prompt_tokens: 14, completion_tokens: 30, total_tokens: 44 } },
      ]);
      expect(r.finish.usage).toEqual({ promptTokens: 14, completionTokens: 30 });
    });

    it('reads usage on the finish chunk, ignoring usage: null elsewhere', () => {
      const r = normalize([
        chunk({ content: 'a' }, null, { usage: null }),
        chunk({}, 'stop', { usage: { prompt_tokens: 5, completion_tokens: 2 } }),
      ]);
      expect(r.finish.usage).toEqual({ promptTokens: 5, completionTokens: 2 });
    });

    it('takes the last of cumulative usage sent on every chunk', () => {
      const r = normalize([
        chunk({ content: 'a' }, null, { usage: { prompt_tokens: 226, completion_tokens: 1 } }),
        chunk({ content: 'b' }, null, { usage: { prompt_tokens: 226, completion_tokens: 2 } }),
        chunk({}, 'stop', { usage: { prompt_tokens: 226, completion_tokens: 3 } }),
      ]);
      expect(r.finish.usage).toEqual({ promptTokens: 226, completionTokens: 3 });
    });

    it('reads usage found only in x_groq', () => {
      const r = normalize([
        chunk({}, 'stop', { x_groq: { id: 'req_1', usage: { prompt_tokens: 210, completion_tokens: 15 } } }),
      ]);
      expect(r.finish.usage).toEqual({ promptTokens: 210, completionTokens: 15 });
    });

    it('reports zeros when no usage comes at all', () => {
      expect(normalize([chunk({ content: 'a' }, 'stop', { timings: { prompt_n: 3 } })]).finish.usage).toEqual(
        { promptTokens: 0, completionTokens: 0 },
      );
    });
  });

  it('ignores an Azure placeholder first chunk with choices: [] and empty id/model', () => {
    const r = normalize([
      {
        choices: [],
        created: 0,
        id: '',
        model: '',
        object: '',
        prompt_filter_results: [{ prompt_index: 0 }],
      },
      chunk({ content: 'Hi' }, 'stop'),
    ]);
    expect(r.text).toBe('Hi');
  });

  it('ignores values that are not objects and choices that are not objects', () => {
    const r = normalize([null, 'x', 42, { choices: [null, 'y'] }, chunk({ content: 'ok' }, 'stop')]);
    expect(r.text).toBe('ok');
  });

  it('uses "stop" in the finish event when it is ended without any finish_reason', () => {
    expect(normalize([chunk({ content: 'a' })]).finish.finishReason).toBe('stop');
  });
});

describe('ChunkNormalizer, Anthropic Messages events', () => {
  const start = {
    type: 'message_start',
    message: {
      id: 'msg_1',
      usage: {
        input_tokens: 377,
        cache_creation_input_tokens: 3,
        cache_read_input_tokens: 20,
        output_tokens: 1,
      },
    },
  };

  it('maps text, tool_use, input_json_delta, stop_reason and split usage', () => {
    const r = normalize([
      start,
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'ping' },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Checking.' } },
      { type: 'content_block_stop', index: 0 },
      {
        type: 'content_block_start',
        index: 1,
        content_block: { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} },
      },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '' } },
      { type: 'ping' },
      {
        type: 'content_block_delta',
        index: 1,
        delta: { type: 'input_json_delta', partial_json: '{"location": "P' },
      },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: 'aris"}' } },
      { type: 'content_block_stop', index: 1 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'tool_use', stop_sequence: null },
        usage: { output_tokens: 65 },
      },
      { type: 'message_stop' },
    ]);
    expect(r.text).toBe('Checking.');
    expect(r.finish).toEqual({
      type: 'finish',
      finishReason: 'tool_use',
      usage: { promptTokens: 400, completionTokens: 65, cacheReadTokens: 20, cacheWriteTokens: 3 },
      toolCalls: [{ id: 'toolu_1', name: 'get_weather', arguments: '{"location": "Paris"}' }],
      responseId: 'msg_1',
    });
  });

  it('leaves a no-argument tool_use with arguments "" (the orchestrator reads that as {})', () => {
    const r = normalize([
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'tool_use', id: 'toolu_1', name: 'list', input: {} },
      },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '' } },
      {
        type: 'message_delta',
        delta: { stop_reason: 'tool_use' },
        usage: { input_tokens: 565, output_tokens: 48 },
      },
    ]);
    expect(r.calls).toEqual([{ id: 'toolu_1', name: 'list', arguments: '' }]);
    expect(r.finish.usage).toEqual({ promptTokens: 565, completionTokens: 48 });
  });

  it('streams thinking as reasoning, never text', () => {
    const r = normalize([
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Let me see.' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'abc' } },
      { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Hi' } },
      { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9 } },
    ]);
    expect(r.reasoning).toBe('Let me see.');
    expect(r.text).toBe('Hi');
    expect(r.finish.finishReason).toBe('end_turn');
  });

  it('counts message_stop as a clean end even without a stop_reason', () => {
    const r = normalize([
      start,
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'x' } },
      { type: 'message_stop' },
    ]);
    expect(r.finished).toBe(true);
    expect(r.finish.finishReason).toBe('stop');
  });

  it('is not finished when the events stop before message_delta or message_stop', () => {
    expect(
      normalize([start, { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'x' } }])
        .finished,
    ).toBe(false);
  });
});

describe('ChunkNormalizer, tool calls written as text', () => {
  const deltas = [
    'Let me look.\n<tool',
    '_call>\n{"name": "weather", "arg',
    'uments": {"location": "Paris"}}\n</tool_call>',
  ];

  it('leaves <tool_call> text alone when recovery is off (the default)', () => {
    const r = normalize([...deltas.map((d) => chunk({ content: d }, null)), chunk({}, 'stop')]);
    expect(r.text).toBe(deltas.join(''));
    expect(r.calls).toEqual([]);
  });

  it('recovers the block as a call, keeps the text around it, and keeps finish_reason "stop"', () => {
    const r = normalize(
      [...deltas.map((d) => chunk({ content: d }, null)), chunk({ content: ' Bye.' }, 'stop')],
      { recoverToolCallsFromText: true },
    );
    expect(r.text).toBe('Let me look.\n Bye.');
    expect(r.finish.finishReason).toBe('stop');
    expect(r.calls).toEqual([
      { id: expect.stringMatching(/^call_/), name: 'weather', arguments: '{"location":"Paris"}' },
    ]);
    expect(r.events.some((e) => e.type === 'tool_call_delta' && e.name === 'weather')).toBe(true);
  });

  it('flushes held-back text before the finish event', () => {
    const r = normalize([chunk({ content: 'a <tool_c' }, 'stop')], { recoverToolCallsFromText: true });
    expect(r.events.map((e) => e.type)).toEqual(['text', 'text', 'finish']);
    expect(r.text).toBe('a <tool_c');
  });
});
