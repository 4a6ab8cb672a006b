import { Injectable } from '@nestjs/common';
import { ModelError, type ModelRequest } from '../llm/model-provider';
import { ModelProviders } from '../llm/model-providers.service';
import type { RunTrace } from '../observability/run-tracing.service';
import { ModelCallRecorder, type EndedCall, type RecordedCall } from './model-call-recorder.service';
import { requestTokens } from './usage-estimate';

/** Who a summary's model call is for, and where it goes when it ends without a summary. */
export interface SummaryCaller {
  /** Whose call it is: its run (null for an on-demand summary), session and key. */
  of: EndedCall['of'];
  /** The step it comes before; 0 outside any run. */
  iteration: number;
  trace: RunTrace;
  signal: AbortSignal;
  /** Stores a call that ended without its summary (cancelled, failed after it streamed): it counts all the same. */
  lost: (call: RecordedCall) => void | Promise<void>;
  /**
   * Reserves the call before it is sent — its prompt's tokens and all of its `maxTokens` — on the
   * limits that apply; throws when it does not fit, and then the call is not sent.
   */
  reserve: (promptTokens: number, maxTokens: number) => Promise<void>;
}

const SUMMARIZER_PROMPT = `You write the summary that replaces the older part of a conversation between a user and an AI coding agent, so that the agent can carry on without it.
Keep: the user's goals, requests and constraints; decisions made and why; files, functions, commands and values that matter, with their paths; what was done, what failed, and what is still open.
Leave out: pleasantries, and tool output the agent can read again (say which file or command it came from instead).
Write plain prose and short lists, in the conversation's language. Never address the user; never invent anything.`;

/**
 * Writes the summary that stands in for older messages (ContextWindow): one model call without
 * tools on the session's model, through ModelProviders like every model call (the idle timeout, the
 * answer budget, the fallbacks), its answer bounded; reserved before it is sent (`SummaryCaller.reserve`),
 * as every model call under a limit is; the call recorded by ModelCallRecorder like
 * every model call, and its row stored by the caller (with the summary, or on its own when the
 * call ended without one: `SummaryCaller.lost`).
 */
@Injectable()
export class Summarizer {
  constructor(
    private readonly models: ModelProviders,
    private readonly recorder: ModelCallRecorder,
  ) {}

  /**
   * The summary of `text` (a transcript), at most `maxTokens` long, and its call as
   * ModelCallRecorder recorded it (priced, metered, traced; estimated where the provider said
   * nothing, as for an answer cut by ANSWER_MAX_BYTES).
   */
  async write(
    model: string,
    text: string,
    maxTokens: number,
    caller: SummaryCaller,
  ): Promise<{ text: string; call: RecordedCall }> {
    const words = Math.floor(maxTokens * 0.7);
    const request: ModelRequest = {
      model,
      messages: [
        { role: 'system', content: SUMMARIZER_PROMPT },
        {
          role: 'user',
          content: `${text}\n\n---\nSummarize the conversation above in at most ${words} words.`,
        },
      ],
      tools: [],
      maxOutputTokens: maxTokens,
    };
    await caller.reserve(await requestTokens(request), maxTokens);
    const sentAt = performance.now();
    const maxChars = maxTokens * 6;
    let out = '';
    // What streamed beyond the kept text (the rest of a long answer, reasoning): counted, not kept.
    // ANSWER_MAX_BYTES bounds it, as it bounds any answer.
    let streamedRest = '';
    let firstTokenMs: number | null = null;
    const ended = (): EndedCall => ({
      of: caller.of,
      iteration: caller.iteration,
      request,
      streamed: out + streamedRest,
      reported: null,
      sentAt,
      firstTokenMs,
      trace: caller.trace,
      purpose: 'summary',
    });
    try {
      for await (const event of this.models.stream(request, caller.signal)) {
        firstTokenMs ??= performance.now() - sentAt;
        // A summary longer than asked for is cut: it must leave room for what it makes room for.
        if (event.type === 'text' && out.length < maxChars) out += event.delta;
        else if (event.type === 'text' || event.type === 'reasoning') streamedRest += event.delta;
        else if (event.type === 'finish') {
          const call = await this.recorder.record({
            ...ended(),
            reported: event.usage,
            answeredBy: event.model,
            finishReason: event.finishReason,
            responseId: event.responseId,
            server: event.server,
            output: () => ({ text: out, toolCalls: [] }),
          });
          return { text: out.slice(0, maxChars).trim(), call };
        }
      }
      throw new ModelError('UPSTREAM_CONNECTION', 'The model stream ended without finishing.', true);
    } catch (err) {
      const failure = err instanceof ModelError ? err.code : caller.signal.aborted ? 'aborted' : 'internal';
      const lost = await this.recorder.record({ ...ended(), failure });
      if (lost) await caller.lost(lost);
      throw err;
    }
  }
}
