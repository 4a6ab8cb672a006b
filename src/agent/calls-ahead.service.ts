import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import type { SentModelCall } from '../llm/sent-model-call';
import type { MessageRow } from '../store/conversation-store.service';
import type { KeyRunCounts, NewRun } from '../store/run-start-store.service';
import type { Toolset } from '../tools/toolset';
import { ModelCalls, type ModelCallSource } from './model-calls.service';
import type { FirstCall, RunHandle } from './run-handle';
import { RunAccounting } from './run-accounting.service';

/** Keys remembered as having had room at their last start here. */
const KEYS_REMEMBERED = 10_000;

/** A run's first model call on its way while its start is stored (CallsAhead.sendWithStart). */
export interface CallAhead {
  /** Stops the call, or keeps it from being sent while its conversation is read; the run's, once kept. */
  controller: AbortController;
  /** The call, with the conversation it was sent with; undefined when it was not sent. */
  sent: Promise<Omit<FirstCall, 'controller'> | undefined>;
}

/**
 * The one seam through which a model call is sent ahead of the loop, and the loop's way to send:
 * a run's first call goes out with its start (`sendWithStart`), while the start commits — the
 * upstream then works while the commit takes its turn; the loop asks `send` for each call, and is
 * handed that one only when it was sent with exactly the conversation the store holds and no limit
 * applies (a limit reserves each call before it is sent, RunAccounting) — otherwise it is stopped
 * and a call is sent now. The first call goes out only when the start will most likely be admitted:
 * the process takes runs and no limit applies (StartLimits.maySendAhead), and the key's last start
 * here left room for another under both limits. A start that then stores nothing stops it
 * (`startFailed`), so a key at its limits costs the upstream nothing and one that reaches them at
 * most a call stopped within the start's round trip.
 *
 * Its gain: the added time to first text at c=16 was 2.4–3.4 ms with it (and the next call sent
 * once a step's results were known, which went with the early reads: docs/performance.md), 5.5–7.3
 * ms with neither (`node bench/run.mjs --only=latency`, three interleaved pairs each).
 */
@Injectable()
export class CallsAhead {
  /** Keys whose last start in this process left room for one more run under both limits. */
  private readonly keysWithRoom = new Set<string>();

  constructor(
    private readonly calls: ModelCalls,
    private readonly accounting: RunAccounting,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Sends the first model call of `run` with `conversation` (what its start statement will store,
   * possibly read beside the statement; undefined when not known before it), unless its key may be
   * near a limit or the conversation needs room made first (ContextWindow.fit, which only the loop
   * does).
   */
  sendWithStart(
    run: NewRun,
    session: ModelCallSource['session'],
    toolset: Toolset,
    conversation: () => MessageRow[] | Promise<MessageRow[]> | undefined,
  ): CallAhead | undefined {
    if (!this.keysWithRoom.has(run.owner)) return undefined;
    const messages = conversation();
    if (messages === undefined) return undefined;
    const controller = new AbortController();
    const send = (messages: MessageRow[]) => {
      // The start failed while the conversation was read: nothing to send.
      if (controller.signal.aborted) return undefined;
      // Stops this call alone, should the run not take it (`send`).
      const stop = new AbortController();
      const call = this.calls.sendAhead(
        {
          run: {
            model: run.model,
            iterations: 0,
            maxIterations: run.maxIterations,
            responseFormat: run.responseFormat,
            replay: run.replay ?? null,
          },
          session,
          conversation: messages,
          toolset,
        },
        AbortSignal.any([controller.signal, stop.signal]),
      );
      return call && { call, conversation: messages, stop };
    };
    const sent = Array.isArray(messages)
      ? Promise.resolve(send(messages))
      : messages.then(send, () => undefined); // the run sends its own call
    return { controller, sent };
  }

  /**
   * The call sent with the start, when it was sent with exactly the conversation the store holds for
   * the run; otherwise it is stopped, and the run sends its own.
   */
  async keep(
    ahead: CallAhead | undefined,
    conversation: readonly MessageRow[],
  ): Promise<FirstCall | undefined> {
    if (!ahead) return undefined;
    const sent = await ahead.sent;
    if (sent !== undefined && sameConversation(sent.conversation, conversation)) {
      return { ...sent, controller: ahead.controller };
    }
    ahead.controller.abort(new Error('the conversation changed while the start was stored'));
    return undefined;
  }

  /** A start of `owner` was admitted: notes whether it left room for one more (`counts` are from before it). */
  startAdmitted(owner: string, counts: KeyRunCounts): void {
    const room =
      counts.lastMinute + 2 <= this.config.rateLimitRunsPerMinute &&
      counts.active + 2 <= this.config.maxActiveRunsPerKey;
    if (!room) {
      this.keysWithRoom.delete(owner);
      return;
    }
    if (this.keysWithRoom.size >= KEYS_REMEMBERED) this.keysWithRoom.clear();
    this.keysWithRoom.add(owner);
  }

  /** A start of `owner` stored nothing: its call is stopped, and the key's next start waits for its own. */
  startFailed(owner: string, ahead: CallAhead | undefined, reason: unknown): void {
    ahead?.controller.abort(reason);
    this.keysWithRoom.delete(owner);
  }

  /**
   * The run's next model call, asking for at most `maxOutputTokens` (as reserved): the one sent with
   * its start when that was sent with exactly the conversation the run holds and no limit applies
   * (then nothing was reserved); otherwise that one is stopped, and one is sent now.
   */
  async send(h: RunHandle, maxOutputTokens?: number): Promise<SentModelCall> {
    const ahead = h.takeFirstCall();
    if (ahead) {
      if (!(await this.accounting.limited(h)) && sameConversation(ahead.conversation, h.conversation)) {
        return ahead.call;
      }
      ahead.stop.abort(new Error('the run changed before it read the call sent with its start'));
    }
    return this.calls.send(h, h.signal, maxOutputTokens);
  }
}

/**
 * Whether two readings of a session's messages are the same conversation: messages are only ever
 * added, so the same ids in the same places, in the same context state, are the same.
 */
function sameConversation(a: readonly MessageRow[], b: readonly MessageRow[]): boolean {
  return (
    a.length === b.length &&
    a.every((m, i) => m.id === b[i].id && m.seq === b[i].seq && m.context === b[i].context)
  );
}
