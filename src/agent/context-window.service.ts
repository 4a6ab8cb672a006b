import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { ModelError } from '../llm/model-provider';
import { registryWindow } from '../llm/model-registry';
import type { CompactionWrite, MessageRow, NewSummary } from '../store/conversation-store.service';
import { RunJournal } from '../store/run-journal.service';
import { contentBytes, prunedStub, toolNames } from './conversation';
import { RequestTokens, type CallShape } from './request-tokens';
import { withCallUsage } from './step-record';
import { RunAccounting } from './run-accounting.service';
import { Summarizer, type SummaryCaller } from './summarizer.service';
import type { RecordedCall } from './model-call-recorder.service';
import type { RunHandle } from './run-handle';
import { countTextYielding, rawMessageTokens } from './token-count';
import { findLastIndex, summarySpan, transcript, withPruned } from './context-spans';

/** The request cannot be made to fit the model's window: the run fails with CONTEXT_TOO_LONG (not retryable). */
export class ContextTooLong extends Error {
  readonly code = 'CONTEXT_TOO_LONG';
  constructor(message: string) {
    super(message);
    this.name = 'ContextTooLong';
  }
}

/** Whether an upstream refused a request as longer than the model's window (OpenAI, Anthropic, compatible servers). */
export function isContextTooLong(err: unknown): boolean {
  return (
    err instanceof ModelError &&
    (err.status === 400 || err.status === 413 || err.status === undefined) &&
    /context_length_exceeded|maximum context length|context window|prompt is too long|too many (input )?tokens/i.test(
      err.message,
    )
  );
}

/** A compaction decided and, when it summarizes, written: what to store, the summary's row and its call. */
export interface Compaction {
  write: CompactionWrite;
  summaryRow: MessageRow | null;
  summaryCall: RecordedCall | null;
  tokensBefore: number;
  tokensAfter: number;
}

/**
 * The stage before every model call ("Long sessions"): counts the request in the model's tokens
 * against its window, and past COMPACT_AT of it, prunes old tool results to stubs, then summarizes
 * the oldest part with one model call, stored (marks and a summary message) before the call it made
 * room for. It never separates an assistant's tool calls from their results and never touches the
 * newest user message or what follows it.
 */
@Injectable()
export class ContextWindow {
  private readonly windows = new Map<string, number>();
  private readonly tokens = new RequestTokens((model) => this.toolResultMaxChars(model));

  constructor(
    private readonly summarizer: Summarizer,
    private readonly journal: RunJournal,
    private readonly accounting: RunAccounting,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The model's context window in tokens: the registry's for a known model, else LLM_CONTEXT_TOKENS. */
  windowOf(model: string): number {
    let window = this.windows.get(model);
    if (window === undefined) {
      window = registryWindow(model) ?? this.config.contextTokens;
      this.windows.set(model, window);
    }
    return window;
  }

  /**
   * Whether the call can go out as it is, known without waiting: under COMPACT_AT, counting at most
   * a little new text. For calls sent ahead (the next one after a step, a run's first one); when it
   * says no, the loop sends the call itself after `fit`.
   */
  fitsAsIs(call: CallShape): boolean {
    return this.tokens.withinNow(call, this.target(call.model));
  }

  /** The tokens of a run's next request as it stands: the conversation the model gets, and the tools. */
  requestTokens(
    r: Pick<RunHandle, 'conversation' | 'toolset'> & { run: { model: string } },
  ): Promise<number> {
    return this.tokens.count({ model: r.run.model, rows: r.conversation, tools: r.toolset.definitions });
  }

  /**
   * Makes room before the run's next model call: nothing while it is under COMPACT_AT; otherwise
   * prunes, then summarizes, stores that (with `context_compacted`, and the summary call's usage as
   * one of the run's calls) and updates the handle. With
   * `tooLong` (the upstream refused the last attempt as too long) it compacts as far as the rules
   * allow. Throws ContextTooLong when the call still cannot fit the window. True when it made a
   * model call of its own (a summary).
   */
  async fit(h: RunHandle, tooLong = false): Promise<boolean> {
    const shape = { model: h.run.model, rows: h.conversation, tools: h.toolset.definitions };
    const window = this.windowOf(shape.model);
    // Far below the window (most calls): nothing to count.
    if (!tooLong && this.tokens.atMost(shape, this.target(shape.model))) return false;
    const before = await this.tokens.count(shape);
    if (!tooLong && before <= this.target(shape.model)) return false;
    // A summary is reserved like the run's calls: one that does not fit is not sent (BudgetSpent).
    let reserved = false;
    const compaction = await this.compact(shape, tooLong ? 0 : this.target(shape.model), before, {
      of: { runId: h.run.id, sessionId: h.run.sessionId, owner: h.run.owner, endUser: h.run.endUser },
      iteration: h.run.iterations + 1,
      trace: h.trace,
      signal: h.signal,
      // A summary that ended without its summary is stored with the run's end, like its own calls.
      lost: (call) => {
        h.unstoredCall = call;
      },
      reserve: async (prompt, max) => {
        reserved = (await this.accounting.reserve(h, prompt, { max, min: max })) > 0;
      },
    });
    // An empty summary is not stored: what it held is given back.
    if (reserved && !compaction?.summaryCall) await this.accounting.giveBack(h);
    if (compaction) {
      const { write, summaryRow, summaryCall, tokensBefore, tokensAfter } = compaction;
      // The summary call: its usage row, and the run's usage with it.
      const usage = summaryCall && withCallUsage(h.usage, summaryCall.usage, summaryCall.costUsd);
      const stored = summaryCall ? await this.accounting.spentIn(h, summaryCall.row) : null;
      await h.sink.record(
        [
          {
            type: 'context_compacted',
            summarizedMessages: write.summarized.length,
            prunedMessages: write.pruned.length,
            tokensBefore,
            tokensAfter,
          },
        ],
        (at) =>
          this.journal.recordCompaction(at, {
            sessionId: h.run.sessionId,
            compaction: write,
            spent: stored,
            run: usage ?? {},
          }),
      );
      h.contextCompacted(write, summaryRow, usage ?? undefined);
    }
    const after = compaction?.tokensAfter ?? before;
    if (tooLong && !compaction) {
      throw new ContextTooLong(
        "The newest prompt and what followed it do not fit the model's context window.",
      );
    }
    if (after > window) {
      throw new ContextTooLong(
        `The request takes ${after} tokens and the model's context window is ${window}: the newest prompt and what followed it do not fit.`,
      );
    }
    return compaction?.summaryCall != null;
  }

  /**
   * The on-demand compaction (`POST /v1/sessions/:id/compact`): summarizes everything before the
   * newest user message's turn; null when there is nothing older to summarize.
   */
  async summarizeOlder(
    model: string,
    rows: readonly MessageRow[],
    caller: SummaryCaller,
  ): Promise<Compaction | null> {
    const shape = { model, rows, tools: [] };
    const before = await this.tokens.count(shape);
    const span = summarySpan(rows, 0, this.tokens.liveTokens(rows, model));
    if (!span) return null;
    return this.summarizeSpan(shape, span, [], before, caller);
  }

  /**
   * Where a tool result is cut when it is sent (conversation.ts cutToolResult): a quarter of the
   * window, at 3 characters a token — prose runs 4 or more to a token, code and data about 3 — so
   * what one tool returns never takes much more than a quarter of the window, and never fails a run.
   */
  toolResultMaxChars(model: string): number {
    return Math.floor(this.windowOf(model) / 4) * 3;
  }

  /** COMPACT_AT of the model's window. */
  target(model: string): number {
    return Math.floor(this.windowOf(model) * this.config.compactAt);
  }

  /** Prunes (oldest first, as few as needed), then summarizes when that is not enough; null when nothing could be done. */
  private async compact(
    shape: CallShape,
    goal: number,
    before: number,
    caller: SummaryCaller,
  ): Promise<Compaction | null> {
    const tk = this.tokens.tokenizerOf(shape.model);
    // The newest step's results stay whole (those after the newest assistant message, or nothing
    // before the run's first call); older ones, of this run's earlier steps too, may go.
    const newestStep = Math.max(
      findLastIndex(shape.rows, (m) => m.role === 'user'),
      findLastIndex(shape.rows, (m) => m.role === 'assistant'),
    );
    const names = toolNames(shape.rows);
    const pruned: MessageRow[] = [];
    let tokens = before;
    for (let i = 0; i < newestStep && tokens > goal; i++) {
      const m = shape.rows[i];
      if (m.role !== 'tool' || m.context) continue;
      const stub = prunedStub(names.get(m.toolCallId ?? '') ?? 'the tool', contentBytes(m));
      const saved =
        this.tokens.rowTokens(m, shape.model) -
        rawMessageTokens({ role: 'tool', toolCallId: '', content: stub }, tk.encoding);
      if (saved <= 0) continue;
      pruned.push(m);
      tokens -= Math.floor(saved * tk.factor);
    }
    const prunedIds = pruned.map((m) => m.id);
    const rows = withPruned(shape.rows, prunedIds);
    if (tokens > goal) {
      const span = summarySpan(rows, Math.floor(goal / 2), this.tokens.liveTokens(rows, shape.model));
      const summarized = span
        ? await this.summarizeSpan({ ...shape, rows }, span, prunedIds, before, caller)
        : null;
      if (summarized) return summarized;
    }
    if (pruned.length === 0) return null;
    const after = await this.tokens.count({ ...shape, rows });
    return {
      write: { pruned: prunedIds, summarized: [], summary: null },
      summaryRow: null,
      summaryCall: null,
      tokensBefore: before,
      tokensAfter: after,
    };
  }

  /** One model call without tools that writes the summary standing in for `span`. */
  private async summarizeSpan(
    shape: CallShape,
    span: readonly MessageRow[],
    pruned: string[],
    before: number,
    caller: SummaryCaller,
  ): Promise<Compaction | null> {
    const tk = this.tokens.tokenizerOf(shape.model);
    // The summary gets an eighth of the target (at most 2,000 tokens); the transcript half the window.
    const summaryTokens = Math.min(2000, Math.max(200, Math.floor(this.target(shape.model) / 8)));
    const transcriptTokens = Math.floor(this.windowOf(shape.model) / 2);
    const names = toolNames(shape.rows);
    let text = transcript(span, names, transcriptTokens * 4);
    const tokens = Math.ceil((await countTextYielding(text, tk.encoding, 128 * 1024)) * tk.factor);
    // Text denser than 4 characters a token (code, data) is cut further, to what fits.
    if (tokens > transcriptTokens) {
      text = transcript(span, names, Math.floor(((text.length * transcriptTokens) / tokens) * 0.9));
    }
    const { text: written, call } = await this.summarizer.write(shape.model, text, summaryTokens, caller);
    if (written === '') return null;
    const summary: NewSummary = {
      id: randomUUID(),
      seq: Math.floor(span[span.length - 1].seq) + 0.5,
      content: `Summary of the earlier conversation:\n${written}`,
      summarizes: { fromId: span[0].id, toId: span[span.length - 1].id },
    };
    const summaryRow: MessageRow = {
      ...summary,
      role: 'system',
      toolCalls: null,
      toolCallId: null,
      runId: null,
      createdAt: new Date(),
      context: null,
      kind: 'summary',
    };
    const spanIds = new Set(span.map((m) => m.id));
    const rows = [...shape.rows.filter((m) => !spanIds.has(m.id)), summaryRow].sort((a, b) => a.seq - b.seq);
    const after = await this.tokens.count({ ...shape, rows: withPruned(rows, pruned) });
    return {
      write: { pruned: pruned.filter((id) => !spanIds.has(id)), summarized: [...spanIds], summary },
      summaryRow,
      summaryCall: call,
      tokensBefore: before,
      tokensAfter: after,
    };
  }
}
