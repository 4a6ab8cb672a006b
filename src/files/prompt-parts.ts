/** A prompt as a client sends it ("Attachments"): a string, or a non-empty list of parts. */
export type PromptInput = string | PromptPart[];

export type PromptPart =
  | { type: 'text'; text: string }
  | { type: 'file'; fileId: string }
  | { type: 'file'; url: string; name?: string };

/** The most parts one prompt may have. */
export const PROMPT_MAX_PARTS = 100;

/**
 * Why `value` is not a prompt (a non-empty string, or 1–PROMPT_MAX_PARTS parts of the three
 * shapes, nothing else in them); null when it is one. `field` names it in the message.
 */
export function promptProblem(value: unknown, field: string): string | null {
  if (typeof value === 'string') return value.length > 0 ? null : `${field} should not be empty`;
  if (!Array.isArray(value)) return `${field} must be a string or a list of parts`;
  if (value.length === 0) return `${field} should not be an empty list`;
  if (value.length > PROMPT_MAX_PARTS) return `${field} may have at most ${PROMPT_MAX_PARTS} parts`;
  for (const [i, part] of value.entries()) {
    const problem = partProblem(part);
    if (problem !== null) return `${field}[${i}] ${problem}`;
  }
  return null;
}

function partProblem(part: unknown): string | null {
  if (typeof part !== 'object' || part === null || Array.isArray(part)) return 'must be an object';
  const p = part as Record<string, unknown>;
  const keys = Object.keys(p);
  const only = (allowed: string[]) => keys.every((k) => allowed.includes(k));
  if (p.type === 'text') {
    if (typeof p.text !== 'string' || p.text.length === 0) return 'text must be a non-empty string';
    return only(['type', 'text']) ? null : 'has a field a text part does not take';
  }
  if (p.type !== 'file') return 'type must be "text" or "file"';
  if ('fileId' in p) {
    if (typeof p.fileId !== 'string' || p.fileId.length === 0) return 'fileId must be a string';
    return only(['type', 'fileId']) ? null : 'takes fileId or url, nothing else';
  }
  if (typeof p.url !== 'string') return 'must have a fileId or a url';
  if (p.name !== undefined && typeof p.name !== 'string') return 'name must be a string';
  return only(['type', 'url', 'name']) ? null : 'takes fileId or url (with name), nothing else';
}

/** The text of a prompt: a string, or its text parts joined by a blank line. */
export function promptText(prompt: PromptInput): string {
  if (typeof prompt === 'string') return prompt;
  return prompt
    .filter((p): p is { type: 'text'; text: string } => p.type === 'text')
    .map((p) => p.text)
    .join('\n\n');
}
