import type { ModelMessage, ModelUserPart } from '../llm/model-provider';
import type { MessageRow } from '../store/conversation-store.service';

/**
 * The conversation the model gets ("Long sessions"): the session's messages that are not
 * summarized, in order, each pruned tool result as its stub. `GET /v1/sessions/:id` lists the same
 * messages with the same marks, so a client replaying it sees exactly this.
 */
export function modelMessages(
  rows: readonly MessageRow[],
  toolResultMaxChars = Infinity,
  files: FileBytes = noFileBytes,
): ModelMessage[] {
  const names = toolNames(rows);
  const messages: ModelMessage[] = [];
  for (const m of rows) {
    if (m.context === 'summarized') continue;
    messages.push(toModelMessage(m, names, toolResultMaxChars, files));
  }
  return messages;
}

/** Reads a file's bytes for a model call ("Attachments"); null when it was deleted. */
export type FileBytes = (fileId: string) => Promise<Buffer | null>;

/** For a conversation read without the files (counting, recording): every file reads as gone. */
const noFileBytes: FileBytes = () => Promise.resolve(null);

/**
 * A tool result as the model gets it when it is longer than `maxChars` (ContextWindow's quarter of
 * the window): its first `maxChars` characters, marked as a read past READ_MAX_BYTES is. Only what
 * is sent is cut: the stored result, and `GET /v1/sessions/:id`, keep all of it.
 */
export function cutToolResult(content: string, maxChars: number): string {
  if (content.length <= maxChars) return content;
  // Not between the two halves of a surrogate pair.
  const end = /[\uD800-\uDBFF]/.test(content[maxChars - 1] ?? '') ? maxChars - 1 : maxChars;
  const kb = (chars: number) =>
    `${Math.max(1, Math.round(Buffer.byteLength(content.slice(0, chars), 'utf8') / 1024))} KB`;
  return (
    `${content.slice(0, end)}\n` +
    `[truncated: showing the first ${kb(end)} of ${kb(content.length)}, more than a quarter of the model's context window; ` +
    'ask for less at a time (a line range, a narrower command) to see the rest]'
  );
}

/** What the model gets in place of a pruned tool result of `bytes` (its content's UTF-8 size). */
export function prunedStub(toolName: string, bytes: number): string {
  const kb = Math.max(1, Math.round(bytes / 1024));
  return `[output of ${toolName} pruned to save context: ${kb} KB; call the tool again to see it]`;
}

/** The tool name of every call in `rows`, by call id (a pruned result's stub names its tool). */
export function toolNames(rows: readonly MessageRow[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const m of rows) for (const c of m.toolCalls ?? []) names.set(c.id, c.name);
  return names;
}

/** One stored message as the model gets it (a tool result longer than `toolResultMaxChars` cut: cutToolResult). */
export function toModelMessage(
  m: MessageRow,
  names: ReadonlyMap<string, string>,
  toolResultMaxChars = Infinity,
  files: FileBytes = noFileBytes,
): ModelMessage {
  switch (m.role) {
    case 'system':
      return { role: 'system', content: m.content ?? '' };
    case 'user':
      return m.parts
        ? { role: 'user', content: m.content ?? '', parts: m.parts.map((p) => userPart(p, files)) }
        : { role: 'user', content: m.content ?? '' };
    case 'assistant':
      return {
        role: 'assistant',
        ...(m.toolCalls && m.toolCalls.length > 0
          ? { content: m.content, toolCalls: m.toolCalls }
          : { content: m.content ?? '' }),
        ...(m.reasoning ? { reasoning: m.reasoning } : {}),
        ...(m.providerData ? { providerData: m.providerData } : {}),
      };
    case 'tool': {
      const toolCallId = m.toolCallId ?? '';
      const content =
        m.context === 'pruned'
          ? prunedStub(names.get(toolCallId) ?? 'the tool', contentBytes(m))
          : cutToolResult(m.content ?? '', toolResultMaxChars);
      // A result that carries a file (read_file of an image): the file goes with it, unless pruned.
      const attached = m.context === 'pruned' ? [] : (m.parts ?? []).filter((p) => p.type === 'file');
      return attached.length > 0
        ? { role: 'tool', toolCallId, content, files: attached.map((p) => userPart(p, files)) }
        : { role: 'tool', toolCallId, content };
    }
  }
}

/** The UTF-8 size of a message's stored content (known without it for a pruned row read without it). */
export function contentBytes(m: MessageRow): number {
  return m.prunedBytes ?? Buffer.byteLength(m.content ?? '', 'utf8');
}

function userPart(part: NonNullable<MessageRow['parts']>[number], files: FileBytes): ModelUserPart {
  if (part.type === 'text') return part;
  return {
    type: 'file',
    name: part.name,
    mediaType: part.mediaType,
    size: part.size,
    width: part.width,
    height: part.height,
    load: () => files(part.fileId),
  };
}
