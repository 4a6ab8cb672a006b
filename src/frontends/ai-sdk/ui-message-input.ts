import type { PromptInput, PromptPart } from '../../files/prompt-parts';

/**
 * Reading the one message of a useChat request that matters (the last): a user prompt, or the
 * approval responses and client tool outputs of the assistant message.
 */

export type LastMessage =
  | { kind: 'prompt'; prompt: PromptInput }
  | { kind: 'decisions'; decisions: ToolPartDecision[] }
  | { kind: 'none' };

export type ToolPartDecision =
  | { toolCallId: string; kind: 'approval'; approve: boolean; reason?: string }
  | { toolCallId: string; kind: 'result'; content: string; isError: boolean };

export function readLastMessage(messages: readonly Record<string, unknown>[]): LastMessage {
  const last = messages[messages.length - 1];
  const parts = Array.isArray(last?.parts) ? (last.parts as unknown[]).filter(isObject) : [];
  if (last?.role === 'user') {
    if (parts.some((p) => p.type === 'file' && typeof p.url === 'string'))
      return { kind: 'prompt', prompt: parts.flatMap(promptPart) };
    const text = parts
      .filter((p) => p.type === 'text' && typeof p.text === 'string')
      .map((p) => p.text as string)
      .join('\n');
    return text.trim() === '' ? { kind: 'none' } : { kind: 'prompt', prompt: text };
  }
  if (last?.role === 'assistant') {
    const decisions: ToolPartDecision[] = [];
    for (const p of parts) {
      const isTool = typeof p.type === 'string' && (p.type.startsWith('tool-') || p.type === 'dynamic-tool');
      if (!isTool || typeof p.toolCallId !== 'string') continue;
      if (
        p.state === 'approval-responded' &&
        isObject(p.approval) &&
        typeof p.approval.approved === 'boolean'
      ) {
        decisions.push({
          toolCallId: p.toolCallId,
          kind: 'approval',
          approve: p.approval.approved,
          ...(typeof p.approval.reason === 'string' ? { reason: p.approval.reason } : {}),
        });
      } else if (p.state === 'output-available') {
        decisions.push({
          toolCallId: p.toolCallId,
          kind: 'result',
          content: asText(p.output),
          isError: false,
        });
      } else if (p.state === 'output-error') {
        decisions.push({
          toolCallId: p.toolCallId,
          kind: 'result',
          content: asText(p.errorText),
          isError: true,
        });
      }
    }
    return { kind: 'decisions', decisions };
  }
  return { kind: 'none' };
}

function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  return value === undefined ? '' : JSON.stringify(value);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const FILE_PATH = /^(?:https?:\/\/[^/]+)?\/v1\/files\/([^/?#]+)$/;

/**
 * A user message's part as a prompt part ("Attachments"): its text, and a file part — `{ type:
 * 'file', mediaType, url }` — by its data URL, or by a `/v1/files/:id` path or URL (checked as the
 * caller's file like any fileId); a URL of anything else is left for the prompt's check to refuse.
 */
function promptPart(p: Record<string, unknown>): PromptPart[] {
  if (p.type === 'text')
    return typeof p.text === 'string' && p.text !== '' ? [{ type: 'text', text: p.text }] : [];
  if (p.type !== 'file' || typeof p.url !== 'string') return [];
  const stored = FILE_PATH.exec(p.url);
  if (stored) return [{ type: 'file', fileId: stored[1] }];
  const name = typeof p.filename === 'string' && p.filename !== '' ? { name: p.filename } : {};
  return [{ type: 'file', url: p.url, ...name }];
}
