import { Injectable } from '@nestjs/common';
import type { ModelRequest, ServerAddress, Usage } from '../llm/model-provider';
import { ModelProviders } from '../llm/model-providers';
import { MetricsService } from '../metrics/metrics.service';

/** The model call that wrote a summary, as it finished: counted and priced like any call. */
export interface SummaryCall {
  usage: Usage;
  /** The `provider/model` that answered. */
  model?: string;
  finishReason: string;
  /** When the request went out (epoch ms). */
  startedAt: number;
  /** What its span records (RunTracing): the request as sent, the answer's id and where it went. */
  request: ModelRequest;
  responseId?: string;
  server?: ServerAddress;
}

const SUMMARIZER_PROMPT = `You write the summary that replaces the older part of a conversation between a user and an AI coding agent, so that the agent can carry on without it.
Keep: the user's goals, requests and constraints; decisions made and why; files, functions, commands and values that matter, with their paths; what was done, what failed, and what is still open.
Leave out: pleasantries, and tool output the agent can read again (say which file or command it came from instead).
Write plain prose and short lists, in the conversation's language. Never address the user; never invent anything.`;

/**
 * Writes the summary that stands in for older messages (ContextWindow): one model call without
 * tools on the session's model, through ModelProviders like every model call (the idle timeout, the
 * answer budget, the fallbacks), its answer bounded. What it used comes back with the text, to be
 * priced and stored like any call's.
 */
@Injectable()
export class Summarizer {
  constructor(
    private readonly models: ModelProviders,
    private readonly metrics: MetricsService,
  ) {}

  /** The summary of `text` (a transcript), at most `maxTokens` long, and the call that wrote it. */
  async write(
    model: string,
    text: string,
    maxTokens: number,
    signal: AbortSignal,
  ): Promise<{ text: string; call: SummaryCall | null }> {
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
    const startedAt = Date.now();
    const maxChars = maxTokens * 6;
    let out = '';
    let call: SummaryCall | null = null;
    for await (const event of this.models.stream(request, signal)) {
      // A summary longer than asked for is cut: it must leave room for what it makes room for.
      if (event.type === 'text' && out.length < maxChars) out += event.delta;
      else if (event.type === 'finish') {
        this.metrics.tokensUsed(event.usage.promptTokens, event.usage.completionTokens);
        call = {
          usage: event.usage,
          model: event.model,
          finishReason: event.finishReason,
          startedAt,
          request,
          responseId: event.responseId,
          server: event.server,
        };
      }
    }
    return { text: out.slice(0, maxChars).trim(), call };
  }
}
