import type { Message, RunAgentInput } from '@ag-ui/core';
import type { PromptInput, PromptPart } from '../../files/prompt-parts';
import type { ClientToolDefinition } from '../../persistence/entities/session.entity';

export type AgUiTurn =
  | { kind: 'prompt'; prompt: PromptInput }
  | { kind: 'results'; results: { toolCallId: string; content: string; isError: boolean }[] }
  /** No new user message: the thread's run goes on from where the client's last stream ended. */
  | { kind: 'continue' }
  | { kind: 'none' };

/**
 * What an input asks for: tool messages at the end answer waiting client calls; an assistant message
 * at the end (what the client kept of the last stream) asks for the rest of the thread's run;
 * otherwise the last user message is the prompt, with the input's context as `description: value`
 * lines after it.
 */
export function readAgUiTurn(input: RunAgentInput): AgUiTurn {
  const trailing: Extract<Message, { role: 'tool' }>[] = [];
  for (let i = input.messages.length - 1; i >= 0; i--) {
    const m = input.messages[i];
    if (m.role !== 'tool') break;
    trailing.unshift(m);
  }
  if (trailing.length > 0) {
    return {
      kind: 'results',
      results: trailing.map((m) => ({
        toolCallId: m.toolCallId,
        content: m.error ?? contentText(m.content),
        isError: m.error !== undefined,
      })),
    };
  }
  if (input.messages.at(-1)?.role === 'assistant') return { kind: 'continue' };
  const user = [...input.messages].reverse().find((m) => m.role === 'user');
  const text = user ? contentText(user.content) : '';
  const files = user ? fileParts(user.content) : [];
  const context = input.context.map((c) => `${c.description}: ${c.value}`);
  if (files.length > 0) {
    // With files, the prompt is its parts in order, the context a text part after them.
    const parts = (user!.content as unknown[]).flatMap(promptPart);
    if (context.length > 0) parts.push({ type: 'text', text: context.join('\n') });
    return { kind: 'prompt', prompt: parts };
  }
  if (text.trim() === '') return { kind: 'none' };
  return { kind: 'prompt', prompt: context.length > 0 ? `${text}\n\n${context.join('\n')}` : text };
}

/** The input's tools as the session's client tools (OpenAI function definitions). */
export function clientToolsOf(input: RunAgentInput): ClientToolDefinition[] {
  return input.tools.map((t) => ({
    type: 'function',
    function: {
      name: t.name,
      description: t.description,
      ...(t.parameters !== undefined ? { parameters: t.parameters as Record<string, unknown> } : {}),
    },
  }));
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return (content as unknown[])
    .filter(
      (p): p is { type: 'text'; text: string } =>
        typeof p === 'object' &&
        p !== null &&
        (p as { type?: unknown }).type === 'text' &&
        typeof (p as { text?: unknown }).text === 'string',
    )
    .map((p) => p.text)
    .join('\n');
}

type Loose = Record<string, unknown>;

const isObject = (v: unknown): v is Loose => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The `binary` input part of AG-UI before 1.0 (`{ type: 'binary', mimeType, data | url | id,
 * filename? }`), which the current schema no longer knows, as the 1.x part that says the same: an
 * `image` for an image type, a `document` otherwise (its source the data, the URL or the file id;
 * the file name kept in `metadata`). Applied to a body before it is validated.
 */
export function upgradeBinaryParts(body: unknown): unknown {
  if (!isObject(body) || !Array.isArray(body.messages)) return body;
  const messages = (body.messages as unknown[]).map((m) => {
    if (!isObject(m) || m.role !== 'user' || !Array.isArray(m.content)) return m;
    return { ...m, content: (m.content as unknown[]).map(upgradeBinary) };
  });
  return { ...body, messages };
}

function upgradeBinary(part: unknown): unknown {
  if (!isObject(part) || part.type !== 'binary' || typeof part.mimeType !== 'string') return part;
  const mimeType = part.mimeType;
  const source =
    typeof part.data === 'string'
      ? { type: 'data', value: part.data, mimeType }
      : typeof part.url === 'string'
        ? { type: 'url', value: part.url, mimeType }
        : typeof part.id === 'string'
          ? { type: 'file', value: part.id, mimeType }
          : undefined;
  if (source === undefined) return part;
  return {
    type: mimeType.startsWith('image/') ? 'image' : 'document',
    source,
    ...(typeof part.filename === 'string' ? { metadata: { filename: part.filename } } : {}),
  };
}

function fileParts(content: unknown): Loose[] {
  if (!Array.isArray(content)) return [];
  return (content as unknown[]).filter(
    (p): p is Loose => isObject(p) && (p.type === 'image' || p.type === 'document'),
  );
}

const FILE_PATH = /^(?:https?:\/\/[^/]+)?\/v1\/files\/([^/?#]+)$/;

/**
 * A user message's part as a prompt part ("Attachments"): text as text; an `image` or `document`
 * by its source — data (base64) as a data URL, a URL (a `/v1/files/:id` of this server, or a data
 * URL), a file id as the caller's file.
 */
function promptPart(part: unknown): PromptPart[] {
  if (!isObject(part)) return [];
  if (part.type === 'text') {
    return typeof part.text === 'string' && part.text !== '' ? [{ type: 'text', text: part.text }] : [];
  }
  if ((part.type !== 'image' && part.type !== 'document') || !isObject(part.source)) return [];
  const source = part.source;
  const value = typeof source.value === 'string' ? source.value : '';
  const name =
    isObject(part.metadata) && typeof part.metadata.filename === 'string'
      ? { name: part.metadata.filename }
      : {};
  if (source.type === 'file') return [{ type: 'file', fileId: value }];
  if (source.type === 'url') {
    const stored = FILE_PATH.exec(value);
    return [stored ? { type: 'file', fileId: stored[1] } : { type: 'file', url: value, ...name }];
  }
  const mimeType = typeof source.mimeType === 'string' ? source.mimeType : 'application/octet-stream';
  return [{ type: 'file', url: `data:${mimeType};base64,${value}`, ...name }];
}
