import { ToolCallAccumulator } from '../../src/llm/tool-call-accumulator';

const GENERATED = /^call_[0-9a-f]{24}$/;

describe('ToolCallAccumulator', () => {
  it('assembles OpenAI-style fragments: id and name on the header only, arguments split anywhere', () => {
    const acc = new ToolCallAccumulator();
    acc.delta(0, 'call_a', 'weather', '');
    acc.delta(0, undefined, undefined, '{"loc');
    acc.delta(0, undefined, undefined, 'ation": "Par');
    acc.delta(0, undefined, undefined, 'is"}');
    expect(acc.finish()).toEqual([{ id: 'call_a', name: 'weather', arguments: '{"location": "Paris"}' }]);
  });

  it('keeps calls in the order first seen, even when fragments of different indexes interleave', () => {
    const acc = new ToolCallAccumulator();
    acc.delta(1, 'call_b', 'b', '{"x"');
    acc.delta(0, 'call_a', 'a', '{"y"');
    acc.delta(1, undefined, undefined, ':1}');
    acc.delta(0, undefined, undefined, ':2}');
    expect(acc.finish()).toEqual([
      { id: 'call_b', name: 'b', arguments: '{"x":1}' },
      { id: 'call_a', name: 'a', arguments: '{"y":2}' },
    ]);
  });

  it('starts the buffer at "" when the header has no arguments key, never "{}"', () => {
    const acc = new ToolCallAccumulator();
    acc.delta(0, 'chatcmpl-tool-1', 'run_command', undefined);
    acc.delta(0, undefined, undefined, '{"command": "ls"}');
    expect(acc.finish()[0].arguments).toBe('{"command": "ls"}');
  });

  it('leaves a no-argument call with arguments ""', () => {
    const acc = new ToolCallAccumulator();
    acc.delta(0, 'call_a', 'list', '');
    acc.delta(0, undefined, undefined, '');
    expect(acc.finish()).toEqual([{ id: 'call_a', name: 'list', arguments: '' }]);
  });

  it('treats id "" or a repeated id on continuations as the same call', () => {
    const acc = new ToolCallAccumulator();
    acc.delta(0, 'call_a', 'weather', '');
    acc.delta(0, undefined /* "" */, undefined, '{"a":');
    acc.delta(0, 'call_a', undefined, '1}');
    expect(acc.finish()).toEqual([{ id: 'call_a', name: 'weather', arguments: '{"a":1}' }]);
  });

  it('does not duplicate a call on trailing empty-argument fragments, and reports nothing for them', () => {
    const acc = new ToolCallAccumulator();
    acc.delta(0, 'call_a', 'weather', '{}');
    expect(acc.delta(0, undefined, undefined, '')).toBeUndefined();
    expect(acc.delta(0, undefined, undefined, undefined)).toBeUndefined();
    expect(acc.finish()).toHaveLength(1);
  });

  it('never overwrites a known name with an empty or different one on a continuation', () => {
    const acc = new ToolCallAccumulator();
    acc.delta(0, 'call_a', 'webSearchTool', '');
    acc.delta(0, undefined, undefined, '{"q": 1');
    acc.delta(0, undefined, 'other', '}');
    expect(acc.finish()).toEqual([{ id: 'call_a', name: 'webSearchTool', arguments: '{"q": 1}' }]);
  });

  it('takes a name that arrives after the id', () => {
    const acc = new ToolCallAccumulator();
    acc.delta(0, 'call_a', undefined, '');
    acc.delta(0, undefined, 'weather', '{}');
    expect(acc.finish()).toEqual([{ id: 'call_a', name: 'weather', arguments: '{}' }]);
  });

  it('separates several calls that all claim index 0 but carry different ids', () => {
    const acc = new ToolCallAccumulator();
    acc.delta(0, 'call_a', 'read_file', '{"path": "a.rs"}');
    acc.delta(0, 'call_b', 'read_file', '{"path": ');
    acc.delta(0, undefined, undefined, '"b.rs"}');
    expect(acc.finish()).toEqual([
      { id: 'call_a', name: 'read_file', arguments: '{"path": "a.rs"}' },
      { id: 'call_b', name: 'read_file', arguments: '{"path": "b.rs"}' },
    ]);
  });

  it('maps an index that starts at 1 to the first call', () => {
    const acc = new ToolCallAccumulator();
    acc.delta(1, 'toolu_1', 'read_file', '');
    acc.delta(1, undefined, undefined, '');
    acc.delta(1, undefined, undefined, '{"path": "a.txt"}');
    const event = acc.delta(1, undefined, undefined, ' ');
    expect(event?.index).toBe(0);
    expect(acc.finish()).toEqual([{ id: 'toolu_1', name: 'read_file', arguments: '{"path": "a.txt"} ' }]);
  });

  it('appends fragments without an index to the latest call', () => {
    const acc = new ToolCallAccumulator();
    acc.delta(undefined, 'gSIMJiOkT', 'weather', '{"location": ');
    acc.delta(undefined, undefined, undefined, '"SF"}');
    expect(acc.finish()).toEqual([{ id: 'gSIMJiOkT', name: 'weather', arguments: '{"location": "SF"}' }]);
  });

  it('generates distinct ids for parallel calls that have neither index nor id', () => {
    const acc = new ToolCallAccumulator();
    acc.delta(undefined, undefined, 'get_weather', '{"location":"Tokyo"}');
    acc.delta(undefined, undefined, 'get_weather', '{"location":"Osaka"}');
    acc.delta(undefined, undefined, 'get_time', '{}');
    const calls = acc.finish();
    expect(calls.map((c) => c.arguments)).toEqual(['{"location":"Tokyo"}', '{"location":"Osaka"}', '{}']);
    for (const call of calls) expect(call.id).toMatch(GENERATED);
    expect(new Set(calls.map((c) => c.id)).size).toBe(3);
  });

  it('keeps one call when an older llama.cpp repeats the name on every fragment', () => {
    const acc = new ToolCallAccumulator();
    acc.delta(0, undefined, 'run', '{"cmd":');
    acc.delta(0, undefined, 'run', ' "ls"}');
    acc.delta(0, undefined, 'run', '');
    const calls = acc.finish();
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ name: 'run', arguments: '{"cmd": "ls"}' });
  });

  it('replaces a generated id by the upstream id that arrives before any arguments', () => {
    const acc = new ToolCallAccumulator();
    const first = acc.delta(0, undefined, 'weather', undefined);
    expect(first?.id).toMatch(GENERATED);
    const second = acc.delta(0, 'call_late', undefined, '{}');
    expect(second).toEqual({
      type: 'tool_call_delta',
      index: 0,
      id: 'call_late',
      name: undefined,
      argumentsDelta: '{}',
    });
    expect(acc.finish()[0].id).toBe('call_late');
  });

  it('gives a fresh id to a call whose upstream id was already used in this response or the conversation', () => {
    const acc = new ToolCallAccumulator(new Set(['0']));
    acc.delta(0, '0', 'a', '{}'); // SGLang numbers calls '0', '1' in every response
    acc.delta(1, '1', 'b', '{');
    acc.delta(1, '1', undefined, '}');
    acc.delta(2, '1', 'c', '{}'); // a buggy server reusing an id at another index
    const calls = acc.finish();
    expect(calls.map((c) => c.name)).toEqual(['a', 'b', 'c']);
    expect(calls[0].id).toMatch(GENERATED);
    expect(calls[1]).toEqual({ id: '1', name: 'b', arguments: '{}' });
    expect(calls[2].id).toMatch(GENERATED);
  });

  it('replaces an upstream id that is too long or has characters outside [A-Za-z0-9_.:-], keeping each call apart', () => {
    const acc = new ToolCallAccumulator();
    const long = 'x'.repeat(150);
    acc.delta(0, long, 'a', '{}');
    acc.delta(1, 'id with spaces/and?query', 'b', '{}');
    acc.delta(2, 'y'.repeat(8000), 'c', '{}');
    acc.delta(3, 'k'.repeat(64), 'd', '{}');
    acc.delta(4, 'functions.get_weather:0', 'e', '{}');
    acc.delta(5, 'toolu_01A09q90qw90lq917835lq9', 'f', '{}');
    // Continuations still match the upstream's own id.
    acc.delta(0, long, undefined, ' ');
    const ids = acc.finish().map((c) => c.id);
    expect(ids).toHaveLength(6);
    expect(ids.slice(0, 3).every((id) => GENERATED.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(6);
    expect(ids.slice(3)).toEqual([
      'k'.repeat(64),
      'functions.get_weather:0',
      'toolu_01A09q90qw90lq917835lq9',
    ]);
  });

  it('reports what is new about a call in tool_call_delta events, indexed by position', () => {
    const acc = new ToolCallAccumulator();
    expect(acc.delta(3, 'call_a', 'weather', '')).toEqual({
      type: 'tool_call_delta',
      index: 0,
      id: 'call_a',
      name: 'weather',
      argumentsDelta: undefined,
    });
    expect(acc.delta(3, undefined, undefined, '{}')).toEqual({
      type: 'tool_call_delta',
      index: 0,
      id: undefined,
      name: undefined,
      argumentsDelta: '{}',
    });
    expect(acc.delta(4, 'call_b', 'time', '')?.index).toBe(1);
  });

  it('keeps extra_content (Gemini thought signatures) with its call', () => {
    const acc = new ToolCallAccumulator();
    acc.delta(undefined, undefined, 'get_weather', '{}', { google: { thought_signature: 'sig' } });
    acc.delta(undefined, undefined, 'get_time', '{}');
    const [first, second] = acc.finish();
    expect(first.extraContent).toEqual({ google: { thought_signature: 'sig' } });
    expect(second).not.toHaveProperty('extraContent');
  });

  it('drops a call that never got a name or arguments', () => {
    const acc = new ToolCallAccumulator();
    acc.delta(0, undefined, undefined, '');
    expect(acc.finish()).toEqual([]);
  });

  describe('Anthropic blocks', () => {
    it('starts a call per tool_use block and appends input_json_delta by block index', () => {
      const acc = new ToolCallAccumulator();
      acc.start(1, 'toolu_1', 'get_weather');
      acc.append(1, '');
      acc.append(1, '{"locati');
      acc.append(1, 'on": "Paris"}');
      acc.start(2, 'toolu_2', 'list');
      acc.append(2, '');
      expect(acc.finish()).toEqual([
        { id: 'toolu_1', name: 'get_weather', arguments: '{"location": "Paris"}' },
        { id: 'toolu_2', name: 'list', arguments: '' },
      ]);
    });

    it('uses arguments given whole at the start unless fragments follow', () => {
      const acc = new ToolCallAccumulator();
      acc.start(0, 'toolu_1', 'a', '{"x":1}');
      acc.start(1, 'toolu_2', 'b', '{"x":1}');
      acc.append(1, '{"y":');
      acc.append(1, '2}');
      expect(acc.finish().map((c) => c.arguments)).toEqual(['{"x":1}', '{"y":2}']);
    });
  });

  it('adds whole calls recovered from text with generated ids', () => {
    const acc = new ToolCallAccumulator();
    acc.add('weather', '{"location":"Paris"}');
    expect(acc.finish()).toEqual([
      { id: expect.stringMatching(GENERATED), name: 'weather', arguments: '{"location":"Paris"}' },
    ]);
  });
});
