import type { ModelMessage, ModelRequest, ModelUserPart } from './model-provider';

/** What the model gets in place of a file that was deleted since its message was sent. */
export function deletedFileNote(name: string): string {
  return `[The attached file "${name}" was deleted; its content is no longer available.]`;
}

/**
 * The request with every file of its messages (a user message's parts, a tool result's files) read
 * (`data`, base64), once per model call before a provider sees it: a deleted file becomes a short
 * note in its place.
 */
export async function withFileData(request: ModelRequest): Promise<ModelRequest> {
  if (!request.messages.some(hasFiles)) return request;
  const messages: ModelMessage[] = [];
  for (const m of request.messages) {
    if (m.role === 'user' && m.parts !== undefined) messages.push({ ...m, parts: await withData(m.parts) });
    else if (m.role === 'tool' && m.files !== undefined)
      messages.push({ ...m, files: await withData(m.files) });
    else messages.push(m);
  }
  return { ...request, messages };
}

function hasFiles(m: ModelMessage): boolean {
  return (m.role === 'user' && m.parts !== undefined) || (m.role === 'tool' && m.files !== undefined);
}

async function withData(parts: readonly ModelUserPart[]): Promise<ModelUserPart[]> {
  const out: ModelUserPart[] = [];
  for (const part of parts) {
    if (part.type === 'text' || part.data !== undefined) {
      out.push(part);
      continue;
    }
    const bytes = await part.load();
    out.push(
      bytes === null
        ? { type: 'text', text: deletedFileNote(part.name) }
        : { ...part, data: bytes.toString('base64') },
    );
  }
  return out;
}

/** A text file's content as the model reads it: its name, then its text. */
export function textFileText(part: { name: string; data?: string }): string {
  return `<file name="${part.name.replace(/"/g, "'")}">\n${Buffer.from(part.data ?? '', 'base64').toString('utf8')}\n</file>`;
}

/** Which kind of input a file is for a provider. */
export function fileKind(mediaType: string): 'image' | 'pdf' | 'text' {
  if (mediaType.startsWith('image/')) return 'image';
  if (mediaType === 'application/pdf') return 'pdf';
  return 'text';
}
