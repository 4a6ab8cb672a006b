import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { summarySpan } from '../../src/agent/context-spans';
import { registryWindow } from '../../src/llm/model-registry';
import { modelMessages, prunedStub } from '../../src/agent/conversation';
import { RequestTokens } from '../../src/agent/request-tokens';
import { CLAUDE_FACTOR, countText, tokenizerFor } from '../../src/agent/token-count';
import type { MessageRow } from '../../src/store/conversation-store.service';
import { proseOf } from '../support/long-session';

let seq = 0;
function row(role: MessageRow['role'], extra: Partial<MessageRow> = {}): MessageRow {
  seq += 1;
  return {
    id: `m${seq}`,
    seq,
    role,
    content: extra.content ?? `${role} ${seq}`,
    toolCalls: null,
    toolCallId: null,
    runId: null,
    createdAt: new Date(0),
    ...extra,
  };
}
const call = (...ids: string[]) => ({
  toolCalls: ids.map((id) => ({ id, name: 'read_file', arguments: '{}' })),
});
const result = (id: string) => ({ toolCallId: id });

describe('the span a summary stands in for', () => {
  beforeEach(() => (seq = 0));
  const one = () => 10;

  it('starts after the session’s system message and ends before the newest user message at the latest', () => {
    const rows = [row('system'), row('user'), row('assistant'), row('user'), row('assistant')];
    expect(summarySpan(rows, 0, one)?.map((m) => m.id)).toEqual(['m2', 'm3']);
  });

  it('never separates parallel tool calls from their results', () => {
    const rows = [
      row('system'),
      row('user'),
      row('assistant', call('a', 'b')),
      row('tool', result('a')),
      row('tool', result('b')),
      row('assistant', call('c')),
      row('tool', result('c')),
      row('assistant'),
      row('user'),
    ];
    // The oldest cut that keeps at most 45 tokens after it: before the assistant that called `c`.
    const span = summarySpan(rows, 45, one)!;
    expect(span.map((m) => m.id)).toEqual(['m2', 'm3', 'm4', 'm5']);
    // Every cut it may choose leaves each call with its results on one side.
    for (let keep = 0; keep <= 100; keep += 5) {
      const s = summarySpan(rows, keep, one)!;
      const called = new Set(s.flatMap((m) => (m.toolCalls ?? []).map((c) => c.id)));
      const answered = new Set(s.filter((m) => m.role === 'tool').map((m) => m.toolCallId));
      expect(answered).toEqual(called);
    }
  });

  it('does not cut after a call whose result is not stored yet', () => {
    const rows = [row('system'), row('user'), row('assistant', call('a')), row('assistant'), row('user')];
    // The call `a` has no result: the only cut that leaves it whole is before its assistant message.
    expect(summarySpan(rows, 0, one)?.map((m) => m.id)).toEqual(['m2']);
  });

  it('starts from the summary that stands in for older messages, and has nothing to do when that is all there is', () => {
    const older = [
      row('system'),
      row('user', { context: 'summarized' }),
      row('assistant', { context: 'summarized' }),
    ];
    const summary = row('system', { kind: 'summary', seq: 3.5 });
    const rows = [...older, summary, row('user'), row('assistant'), row('user')];
    expect(summarySpan(rows, 0, one)?.map((m) => m.id)).toEqual(['m4', 'm5', 'm6']);
    expect(summarySpan([...older, summary, row('user')], 0, one)).toBeNull();
  });

  it('has nothing to summarize before the first prompt', () => {
    expect(summarySpan([row('system'), row('user'), row('assistant')], 0, one)).toBeNull();
  });
});

describe('the conversation the model gets', () => {
  beforeEach(() => (seq = 0));

  it('leaves summarized messages out and gives a pruned result as its stub, naming its tool and size', () => {
    const big = 'x'.repeat(48 * 1024);
    const rows = [
      row('system'),
      row('user', { context: 'summarized' }),
      row('system', { kind: 'summary', content: 'Summary.' }),
      row('user'),
      row('assistant', call('a')),
      row('tool', { ...result('a'), content: big, context: 'pruned' }),
      row('user'),
    ];
    expect(modelMessages(rows)).toEqual([
      { role: 'system', content: 'system 1' },
      { role: 'system', content: 'Summary.' },
      { role: 'user', content: 'user 4' },
      { role: 'assistant', content: 'assistant 5', toolCalls: call('a').toolCalls },
      {
        role: 'tool',
        toolCallId: 'a',
        content: '[output of read_file pruned to save context: 48 KB; call the tool again to see it]',
      },
      { role: 'user', content: 'user 7' },
    ]);
    expect(prunedStub('read_file', big.length)).toBe(
      '[output of read_file pruned to save context: 48 KB; call the tool again to see it]',
    );
  });
});

describe('counting tokens', () => {
  it('uses OpenAI’s own tokenizer for its models and an estimate for the rest', () => {
    expect(tokenizerFor('openai', 'gpt-4o')).toEqual({ kind: 'exact', encoding: 'o200k_base', factor: 1 });
    expect(tokenizerFor('openai', 'gpt-4.1-mini').encoding).toBe('o200k_base');
    expect(tokenizerFor('openai-responses', 'gpt-5')).toMatchObject({
      kind: 'exact',
      encoding: 'o200k_base',
    });
    expect(tokenizerFor('openai', 'gpt-4').encoding).toBe('cl100k_base');
    expect(tokenizerFor('openai', 'gpt-4-turbo').encoding).toBe('cl100k_base');
    expect(tokenizerFor('openai', 'gpt-3.5-turbo').encoding).toBe('cl100k_base');
    // OpenRouter's name of an OpenAI model, through the OpenAI-compatible provider.
    expect(tokenizerFor('openai', 'openai/gpt-4o').kind).toBe('exact');
    expect(tokenizerFor('anthropic', 'claude-sonnet-4-5')).toEqual({
      kind: 'estimate',
      encoding: 'o200k_base',
      factor: CLAUDE_FACTOR,
      images: 'area',
    });
    expect(tokenizerFor('openai', 'qwen3-coder').kind).toBe('estimate');
  });

  it('counts long text in slices to within 1 % of counting it whole', () => {
    const text = proseOf(50 * 1024, 3) + Buffer.alloc(20_000, 'aGVsbG8gd29ybGQ=').toString();
    const whole = countTokens(text);
    expect(Math.abs(countText(text, 'o200k_base') - whole) / whole).toBeLessThan(0.01);
    expect(countText('hello world', 'o200k_base')).toBe(2);
  });

  it('counts text that looks like a special token as plain text instead of throwing', () => {
    expect(countText('before <|endoftext|> after <|im_start|>', 'o200k_base')).toBeGreaterThan(5);
    expect(countText('<|endoftext|>', 'cl100k_base')).toBeGreaterThan(1);
  });

  it('hands the event loop back while it counts a request holding a megabyte-long message', async () => {
    const rows = [row('system'), row('user', { content: proseOf(1024 * 1024, 5) })];
    let loopTurned = false;
    const counted = new RequestTokens().count({ model: 'some-model', rows, tools: [] });
    setImmediate(() => (loopTurned = true));
    const tokens = await counted;
    expect(loopTurned).toBe(true);
    // And it counts the same as counting at once.
    expect(tokens).toBe(
      Math.ceil(
        (3 + 4 + countText('system 1', 'o200k_base') + 4 + countText(rows[1].content!, 'o200k_base')) * 1.1,
      ),
    );
  });

  it('takes a known model’s window from the registry and knows none for a model it has never heard of', () => {
    expect(registryWindow('openai/gpt-4o')).toBe(128_000);
    expect(registryWindow('gpt-4o')).toBe(128_000);
    expect(registryWindow('anthropic/claude-sonnet-4-20250514')).toBe(200_000);
    expect(registryWindow('tiny-window-model')).toBeNull();
  });
});
