import type { ModelMessage, ModelUserPart } from '../llm/model-provider';

/**
 * How a provider counts an image: `tiles` — OpenAI's rule (scaled to fit 2048×2048, then its short
 * side to 768; 85 tokens plus 170 per 512-pixel tile) —, or `area` — Anthropic's (scaled to a long
 * side of at most 1568; width × height / 750).
 */
export type ImageRule = 'tiles' | 'area';

/** A PDF's tokens, estimated from its size (its pages are not read): one per 32 bytes, at least 1,500. */
export function pdfTokens(size: number): number {
  return Math.max(1500, Math.ceil(size / 32));
}

/** An image's tokens by `rule`; an image of unknown size counts as a large one. */
export function imageTokens(
  width: number | null | undefined,
  height: number | null | undefined,
  rule: ImageRule,
): number {
  if (!width || !height) return rule === 'area' ? 1600 : 1105;
  if (rule === 'area') {
    const scale = Math.min(1, 1568 / Math.max(width, height));
    return Math.ceil((width * scale * (height * scale)) / 750);
  }
  let w = width;
  let h = height;
  const fit = Math.min(1, 2048 / Math.max(w, h));
  w *= fit;
  h *= fit;
  const shortSide = Math.min(1, 768 / Math.min(w, h));
  w *= shortSide;
  h *= shortSide;
  return 85 + 170 * Math.ceil(w / 512) * Math.ceil(h / 512);
}

function partTokens(part: ModelUserPart, rule: ImageRule): number {
  if (part.type === 'text') return 0;
  if (part.mediaType.startsWith('image/')) return imageTokens(part.width, part.height, rule);
  if (part.mediaType === 'application/pdf') return pdfTokens(part.size ?? 0);
  // A text file: about four UTF-8 bytes a token, plus its name's frame.
  return Math.ceil((part.size ?? 0) / 4) + 10;
}

/** The tokens of a message's files — a user message's, a tool result's (its text is counted as text). */
export function attachmentTokens(m: ModelMessage, rule: ImageRule): number {
  const parts = m.role === 'user' ? m.parts : m.role === 'tool' ? m.files : undefined;
  let n = 0;
  for (const part of parts ?? []) n += partTokens(part, rule);
  return n;
}

/** At least attachmentTokens(m, rule) for either rule. */
export function attachmentTokensBound(m: ModelMessage): number {
  return Math.max(attachmentTokens(m, 'tiles'), attachmentTokens(m, 'area'));
}
