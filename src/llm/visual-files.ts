import { fileKind } from './file-data';
import type { ModelMessage, ModelUserPart } from './model-provider';

/** What a model that takes no images or PDFs gets in place of one ("Attachments"). */
export function notShownNote(part: { name: string; mediaType: string }): string {
  return `[The file "${part.name}" (${part.mediaType}) is not shown: this model does not take images or PDFs.]`;
}

/**
 * The conversation for a model the registry knows takes no images or PDFs: each one in it — a
 * prompt's sent to an earlier model, a read_file result's (a replay may go on with another model)
 * — a short note in its place. Text files stay.
 */
export function withoutVisualFiles(messages: readonly ModelMessage[]): ModelMessage[] {
  const shown = (part: ModelUserPart): ModelUserPart =>
    part.type === 'file' && isVisual(part) ? { type: 'text', text: notShownNote(part) } : part;
  return messages.map((m) => {
    if (m.role === 'user' && m.parts) return { ...m, parts: m.parts.map(shown) };
    if (m.role !== 'tool' || !m.files) return m;
    const kept = m.files.filter((p) => p.type === 'text' || !isVisual(p));
    const notes = m.files.flatMap((p) => (p.type === 'file' && isVisual(p) ? [notShownNote(p)] : []));
    const content = [m.content, ...notes].join('\n');
    return kept.length > 0
      ? { ...m, content, files: kept }
      : { role: 'tool', toolCallId: m.toolCallId, content };
  });
}

function isVisual(part: { mediaType: string }): boolean {
  return fileKind(part.mediaType) !== 'text';
}
