import { attachmentTokens, imageTokens, pdfTokens } from '../../src/agent/attachment-tokens';
import { rawMessageTokens, tokenizerFor } from '../../src/agent/token-count';
import type { ModelMessage } from '../../src/llm/model-provider';

const load = () => Promise.resolve(null);

describe('attachments in the context window', () => {
  it("counts an image by OpenAI's tiles (its documented examples)", () => {
    expect(imageTokens(1024, 1024, 'tiles')).toBe(765);
    expect(imageTokens(2048, 4096, 'tiles')).toBe(1105);
    expect(imageTokens(100, 100, 'tiles')).toBe(255);
  });

  it("counts an image by Anthropic's area rule, scaled to a long side of 1568", () => {
    expect(imageTokens(1000, 1000, 'area')).toBe(1334);
    expect(imageTokens(3136, 1568, 'area')).toBe(Math.ceil((1568 * 784) / 750));
  });

  it('adds a message’s files to its text, by its provider’s rule', () => {
    const message: ModelMessage = {
      role: 'user',
      content: 'What is this?',
      parts: [
        { type: 'text', text: 'What is this?' },
        { type: 'file', name: 'a.png', mediaType: 'image/png', width: 1000, height: 1000, size: 5000, load },
        { type: 'file', name: 'r.pdf', mediaType: 'application/pdf', size: 320_000, load },
      ],
    };
    expect(attachmentTokens(message, 'area')).toBe(1334 + pdfTokens(320_000));
    expect(pdfTokens(320_000)).toBe(10_000);
    const claude = tokenizerFor('anthropic', 'claude-sonnet-4');
    expect(claude.images).toBe('area');
    const text = rawMessageTokens({ role: 'user', content: 'What is this?' }, claude.encoding);
    expect(rawMessageTokens(message, claude.encoding, claude.images)).toBe(text + 1334 + 10_000);
    expect(rawMessageTokens(message, 'o200k_base')).toBe(text + 765 + 10_000);
  });
});
