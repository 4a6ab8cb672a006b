import { toModelMessage } from '../../src/agent/conversation';
import { rawMessageTokens, tokenizerFor } from '../../src/agent/token-count';
import type { MessageRow } from '../../src/store/conversation-store.service';

/** A stored tool message whose result carries an image (read_file of a PNG), as the step stores it. */
function toolRow(context: MessageRow['context'] = null): MessageRow {
  const content = 'shot.png: image (image/png, 5000 bytes), 1000×1000 pixels: attached.';
  return {
    id: '00000000-0000-4000-8000-000000000001',
    seq: 3,
    role: 'tool',
    content,
    toolCalls: null,
    toolCallId: 'call_1',
    runId: null,
    createdAt: new Date(),
    context,
    parts: [
      { type: 'text', text: content },
      {
        type: 'file',
        fileId: '00000000-0000-4000-8000-000000000002',
        name: 'shot.png',
        mediaType: 'image/png',
        size: 5000,
        width: 1000,
        height: 1000,
      },
    ],
  };
}

describe("a tool result's image in the context window", () => {
  it("counts as its provider counts an image: OpenAI's tiles, Anthropic's area", () => {
    const message = toModelMessage(toolRow(), new Map());
    const textOnly = { role: 'tool' as const, toolCallId: 'call_1', content: toolRow().content ?? '' };
    expect(rawMessageTokens(message, 'o200k_base')).toBe(rawMessageTokens(textOnly, 'o200k_base') + 765);
    const claude = tokenizerFor('anthropic', 'claude-sonnet-4');
    expect(rawMessageTokens(message, claude.encoding, claude.images)).toBe(
      rawMessageTokens(textOnly, claude.encoding) + 1334,
    );
    // A pruned result's stub goes, not its image.
    const pruned = toModelMessage(toolRow('pruned'), new Map([['call_1', 'read_file']]));
    expect(pruned).toEqual({
      role: 'tool',
      toolCallId: 'call_1',
      content: expect.stringContaining('pruned'),
    });
  });
});
