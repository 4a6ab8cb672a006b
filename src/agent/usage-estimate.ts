import type { ModelRequest, Usage } from '../llm/model-provider';
import {
  countTextYielding,
  rawMessageTokensYielding,
  rawToolTokens,
  REQUEST_TOKENS,
  tokenizerFor,
} from './token-count';
import { splitModelName } from '../llm/model-name';

/** Text counted between two yields to the event loop (as RequestTokens counts a request). */
const YIELD_CHARS = 128 * 1024;

/** What an estimate is made from: the request as sent, and what the call streamed back. */
export interface SentAndStreamed {
  request: Pick<ModelRequest, 'model' | 'messages' | 'tools'> &
    Partial<Pick<ModelRequest, 'maxOutputTokens'>>;
  /** Every piece the call streamed: text, reasoning and tool-call arguments. */
  streamed: string;
}

/**
 * The usage of a call whose provider reported none, or only part (an answer cut by
 * ANSWER_MAX_BYTES, a cancelled call, one that failed after it streamed): what it did report kept,
 * the rest counted as "Long sessions" counts a request (token-count.ts, the model's tokenizer or its
 * estimate) — the prompt from what was sent, the completion from what was streamed — and marked
 * `estimated`. A full report comes back as it is, without counting anything.
 */
export async function completeUsage(reported: Usage | null, call: SentAndStreamed): Promise<Usage> {
  const promptMissing = !reported || reported.promptTokens <= 0;
  const completionMissing = (!reported || reported.completionTokens <= 0) && call.streamed !== '';
  if (reported && !promptMissing && !completionMissing) return reported;
  const { provider, model } = splitModelName(call.request.model);
  const tk = tokenizerFor(provider, model);
  const scaled = (raw: number) => Math.ceil(raw * tk.factor);
  let promptTokens = reported?.promptTokens ?? 0;
  if (promptMissing) promptTokens = await requestTokens(call.request);
  let completionTokens = reported?.completionTokens ?? 0;
  if (completionMissing)
    completionTokens = scaled(await countTextYielding(call.streamed, tk.encoding, YIELD_CHARS));
  return { ...reported, promptTokens, completionTokens, estimated: true };
}

/** A request's prompt tokens as "Long sessions" counts them: what a call is reserved and estimated by. */
export async function requestTokens(request: SentAndStreamed['request']): Promise<number> {
  const { provider, model } = splitModelName(request.model);
  const tk = tokenizerFor(provider, model);
  let raw = REQUEST_TOKENS + rawToolTokens(request.tools, tk.encoding);
  for (const m of request.messages) raw += await rawMessageTokensYielding(m, tk.encoding, YIELD_CHARS);
  return Math.ceil(raw * tk.factor);
}
