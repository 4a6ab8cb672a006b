import { type RecoveredToolCall, ToolCallTextRecovery } from '../../src/llm/tool-call-text-recovery';

/** Feeds the deltas one by one; returns each push's output, the flush and the calls. */
function feed(deltas: string[]): { shown: string[]; flushed: string; calls: RecoveredToolCall[] } {
  const calls: RecoveredToolCall[] = [];
  const recovery = new ToolCallTextRecovery((call) => calls.push(call));
  const shown = deltas.map((d) => recovery.push(d));
  return { shown, flushed: recovery.flush(), calls };
}

const BLOCK = '<tool_call>\n{"name": "weather", "arguments": {"location": "Paris"}}\n</tool_call>';

describe('ToolCallTextRecovery', () => {
  it('passes text without a tag straight through, delta by delta', () => {
    expect(feed(['Hello', ' world', ' 1 < 2'])).toEqual({
      shown: ['Hello', ' world', ' 1 < 2'],
      flushed: '',
      calls: [],
    });
  });

  it('turns a whole block into a call and streams the text around it', () => {
    const result = feed([`Let me check. ${BLOCK} Done.`]);
    expect(result.shown).toEqual(['Let me check.  Done.']);
    expect(result.calls).toEqual([{ name: 'weather', arguments: '{"location":"Paris"}' }]);
  });

  it('recovers a block whose tags and JSON are split across many deltas', () => {
    const text = `Sure.${BLOCK}After.`;
    const deltas = text.match(/.{1,3}/gs) ?? [];
    const result = feed(deltas);
    expect(result.shown.join('') + result.flushed).toBe('Sure.After.');
    expect(result.calls).toEqual([{ name: 'weather', arguments: '{"location":"Paris"}' }]);
  });

  it('holds back only what could be the start of the tag', () => {
    const recovery = new ToolCallTextRecovery(() => undefined);
    expect(recovery.push('Answer: <tool')).toBe('Answer: ');
    expect(recovery.push('box> is a word')).toBe('<toolbox> is a word');
    expect(recovery.push('a <')).toBe('a ');
    expect(recovery.push('b')).toBe('<b');
  });

  it('gives held-back text back at the end of the stream', () => {
    expect(feed(['It ends with <tool_c'])).toEqual({
      shown: ['It ends with '],
      flushed: '<tool_c',
      calls: [],
    });
  });

  it('recovers several blocks in order, and string arguments as given', () => {
    const result = feed([
      '<tool_call>{"name":"a","arguments":{"x":1}}</tool_call>',
      '<tool_call>{"name":"b","arguments":"{\\"y\\":2}"}</tool_call>',
      '<tool_call>{"name":"c"}</tool_call>',
    ]);
    expect(result.calls).toEqual([
      { name: 'a', arguments: '{"x":1}' },
      { name: 'b', arguments: '{"y":2}' },
      { name: 'c', arguments: '' },
    ]);
    expect(result.shown.join('')).toBe('');
  });

  it('shows a block that is not a call (not JSON, or no name) as the text it was', () => {
    const result = feed(['a <tool_call>not json</tool_call> b <tool_call>{"arguments":{}}</tool_call>']);
    expect(result.calls).toEqual([]);
    expect(result.shown.join('')).toBe(
      'a <tool_call>not json</tool_call> b <tool_call>{"arguments":{}}</tool_call>',
    );
  });

  it('recovers a block cut off before its closing tag when its JSON is whole (the tag used as a stop sequence)', () => {
    const result = feed(['Ok.\n<tool_call>\n{"name": "weather", "arguments": {}}\n']);
    expect(result.shown).toEqual(['Ok.\n']);
    expect(result.flushed).toBe('');
    expect(result.calls).toEqual([{ name: 'weather', arguments: '{}' }]);
  });

  it('gives back an unfinished block as text when its JSON is cut off', () => {
    const result = feed(['<tool_call>{"name": "weat']);
    expect(result.calls).toEqual([]);
    expect(result.flushed).toBe('<tool_call>{"name": "weat');
  });

  it('finds a closing tag split across deltas inside a long block', () => {
    const args = 'x'.repeat(5000);
    const result = feed(['<tool_call>{"name":"w","arguments":{"t":"', args, '"}}</tool', '_call>tail']);
    expect(result.calls).toEqual([{ name: 'w', arguments: JSON.stringify({ t: args }) }]);
    expect(result.shown.join('')).toBe('tail');
  });
});
