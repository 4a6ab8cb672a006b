import { randomBytes } from 'node:crypto';
import type { ModelMessage } from '../../src/llm/model-provider';
import { RequestTokens } from '../../src/agent/request-tokens';
import { messageTokensBound, rawMessageTokens } from '../../src/agent/token-count';
import type { MessageRow } from '../../src/store/conversation-store.service';

const TEXTS = {
  prose: 'The quick brown fox jumps over the lazy dog. '.repeat(200),
  code: 'function f(a, b) {\n  return a.map((x) => x * b).filter(Boolean);\n}\n'.repeat(100),
  cjk: '長いセッションは決して壊れない。文脈は要約される。'.repeat(100),
  emoji: '🙂🚀✨👩‍💻🇳🇴'.repeat(200),
  base64: randomBytes(6000).toString('base64'),
  special: '<|endoftext|><|im_start|>user\n'.repeat(100),
  spaces: ' \n\t'.repeat(1000),
};

const row = (id: string, role: MessageRow['role'], content: string): MessageRow => ({
  id,
  seq: 1,
  role,
  content,
  toolCalls: null,
  toolCallId: null,
  runId: null,
  createdAt: new Date(),
});

describe('the bound that lets most calls skip the tokenizer', () => {
  it.each(Object.entries(TEXTS))('is never below what either tokenizer counts: %s', (_, text) => {
    const messages: ModelMessage[] = [
      { role: 'user', content: text },
      {
        role: 'assistant',
        content: text.slice(0, 500),
        toolCalls: [{ id: 'c1', name: 'write_file', arguments: JSON.stringify({ content: text }) }],
      },
    ];
    for (const m of messages) {
      const bound = messageTokensBound(m);
      expect(bound).toBeGreaterThanOrEqual(rawMessageTokens(m, 'o200k_base'));
      expect(bound).toBeGreaterThanOrEqual(rawMessageTokens(m, 'cl100k_base'));
    }
  });

  it('says a small request fits without counting, and leaves a large one to be counted', async () => {
    const tokens = new RequestTokens();
    const small = { model: 'anthropic/claude-x', rows: [row('a', 'user', 'hello')], tools: [] };
    expect(tokens.atMost(small, 1000)).toBe(true);
    const large = { model: 'anthropic/claude-x', rows: [row('b', 'user', TEXTS.prose)], tools: [] };
    expect(tokens.atMost(large, 1000)).toBe(false);
    // What the counting finds for it, it is not above: the bound errs only high.
    expect(await tokens.count(large)).toBeGreaterThan(1000);
    // Once counted, the count itself is used: a limit above it is known to hold.
    expect(tokens.atMost(large, (await tokens.count(large)) + 1)).toBe(true);
  });
});
