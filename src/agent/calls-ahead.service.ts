import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import type { SentModelCall } from '../llm/sent-model-call';
import type { MessageRow } from '../store/conversation-store.service';
import type { KeyRunCounts, NewRun } from '../store/run-start-store.service';
import type { Toolset } from '../tools/toolset';
import { RunTracing } from '../observability/run-tracing.service';
import { ModelCallRecorder } from './model-call-recorder.service';
import { ModelCalls, type ModelCallSource } from './model-calls.service';
import type { FirstCall, RunHandle } from './run-handle';
import { RunAccounting } from './run-accounting.service';

/** Keys remembered as having had room at their last start here. */
const KEYS_REMEMBERED = 10_000;

/** Whose first call was sent with a start: the run, its session and key (and end user). */
export interface AheadOf {
  runId: string;
  sessionId: string;
  owner: string;
  endUser: string | null;
}

/** A run's first model call on its way while its start is stored (CallsAhead.sendWithStart). */
export interface CallAhead {
  /** Stops the call, or keeps it from being sent while its conversation is read; the run's, once kept. */
  controller: AbortController;
  /**
   * Under a limit, the call's reservation: the output tokens granted (the key had room for the call,
   * so the start needs no look at its budget), or null when there was none (not reserved, or it did
   * not fit now). Null at once when no limit applies.
   */
  reserved: Promise<number | null>;
  /** The call, with the conversation it was sent with; undefined when it was not sent. */
  sent: Promise<Omit<FirstCall, 'controller'> | undefined>;
}

/**
 * The one seam through which a model call is sent ahead of the loop, and the loop's way to send:
 * a run's first call goes out with its start (`sendWithStart`), while the start commits — the
 * upstream then works while the commit takes its turn; the loop asks `send` for each call, and is
 * handed that one only when it was sent with exactly the conversation the store holds, and was
 * reserved when a limit applies — otherwise it is stopped and a call is sent now. Under the key's or
 * its end user's limits the call is reserved first (RunAccounting.reserveFirst) and goes out once
 * its reservation is granted: the reservation is then the start's look at the budget, and the run's
 * first step gives it back. The first call goes out only when the start will most likely be
 * admitted: the process takes runs and the session has no limits of its own
 * (StartLimits.maySendAhead), and the key's last start here left room for another under both
 * limits. A start that then stores nothing stops it (`startFailed`), so a key at its limits costs
 * the upstream nothing and one that reaches them at most a call stopped within the start's round
 * trip — counted as a cancelled call is, with its reservation given back.
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
    private readonly recorder: ModelCallRecorder,
    private readonly tracing: RunTracing,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Sends the first model call of `run` with `conversation` (what its start statement will store,
   * possibly read beside the statement; undefined when not known before it) — reserved first under
   * the key's or its end user's limits — unless the key may be near its limits on runs, the
   * conversation needs room made first (ContextWindow.fit, which only the loop does), or a limit has
   * no room for the call now.
   */
  sendWithStart(
    run: NewRun,
    session: ModelCallSource['session'] & { endUser: string | null },
    toolset: Toolset,
    conversation: () => MessageRow[] | Promise<MessageRow[]> | undefined,
  ): CallAhead | undefined {
    if (!this.keysWithRoom.has(run.owner)) return undefined;
    const messages = conversation();
    if (messages === undefined) return undefined;
    const controller = new AbortController();
    const spender = { owner: run.owner, endUser: session.endUser };
    const sourceOf = (messages: MessageRow[]): ModelCallSource => ({
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
    });
    const limited = this.accounting.keyLimited(spender);
    // Once the conversation is known: null when the call does not go ahead (the start failed, it
    // does not fit as it is, or a limit has no room for it now), else what it was reserved for
    // (undefined: no limit, nothing reserved).
    const reservation = Promise.resolve(messages).then(async (m) => {
      const source = sourceOf(m);
      if (controller.signal.aborted || !this.calls.fitsAhead(source)) return { source, granted: null };
      if (!limited) return { source, granted: undefined };
      const promptTokens = await this.calls.promptTokens(source);
      return {
        source,
        granted: await this.accounting.reserveFirst(run.id, spender, run.model, promptTokens),
      };
    });
    const sent = reservation.then(({ source, granted }) => {
      // The start failed while the call was reserved; or it does not go ahead.
      if (controller.signal.aborted || granted === null) return undefined;
      // Stops this call alone, should the run not take it (`send`).
      const stop = new AbortController();
      const call = this.calls.send(source, AbortSignal.any([controller.signal, stop.signal]), granted);
      return { call, conversation: source.conversation, stop, reservedOutput: granted };
    });
    return {
      controller,
      // Without a limit, known at once: the start does not wait for the conversation.
      reserved: limited
        ? reservation.then(
            ({ granted }) => granted ?? null,
            () => null,
          )
        : Promise.resolve(null),
      // A failed read or reservation: the run sends its own call.
      sent: sent.catch(() => undefined),
    };
  }

  /**
   * The call sent with the start, when it was sent with exactly the conversation the store holds for
   * the run; otherwise it is stopped, and the run sends its own.
   */
  async keep(
    ahead: CallAhead | undefined,
    conversation: readonly MessageRow[],
    of: AheadOf,
  ): Promise<FirstCall | undefined> {
    if (!ahead) return undefined;
    const sent = await ahead.sent;
    if (sent !== undefined && sameConversation(sent.conversation, conversation)) {
      return { ...sent, controller: ahead.controller };
    }
    ahead.controller.abort(new Error('the conversation changed while the start was stored'));
    // Before the run's loop reserves a call of its own: this gives back all that the run holds.
    await this.countStopped(ahead, of);
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

  /**
   * The start of `of.runId` stored nothing: its call is stopped and counted, its reservation given
   * back, and the key's next start waits for its own.
   */
  startFailed(ahead: CallAhead | undefined, of: AheadOf, reason: unknown): void {
    this.keysWithRoom.delete(of.owner);
    if (!ahead) return;
    ahead.controller.abort(reason);
    // The run was never stored, so nothing else of it can reserve: this races nothing. One that
    // fails leaves the reservation to the sweep of those no run holds (BudgetStore.releaseOrphans).
    this.countStopped(ahead, of).catch(() => undefined);
  }

  /**
   * A call sent ahead that no run will read, once stopped: its request went out, so it is counted
   * as a cancelled call is (its prompt, estimated: ModelCallRecorder) — on the key's counters, giving
   * back what the run held reserved, in one statement; a call never sent gives its reservation back.
   */
  private async countStopped(ahead: CallAhead, of: AheadOf): Promise<void> {
    const [granted, sent] = await Promise.all([ahead.reserved, ahead.sent]);
    if (sent === undefined) {
      if (granted !== null) await this.accounting.release(of.runId);
      return;
    }
    const call = await this.recorder.record({
      // A step of no run: the run never had it (or was never stored).
      of: { runId: null, sessionId: of.sessionId, owner: of.owner, endUser: of.endUser },
      iteration: 1,
      request: sent.call.request,
      streamed: '',
      reported: null,
      sentAt: sent.call.sentAt,
      firstTokenMs: null,
      failure: 'aborted',
      trace: this.tracing.outsideRun(),
    });
    await this.accounting.storeSessionCall(call.row, of.runId);
  }

  /**
   * The output tokens the run's first call was reserved for with its start, while that call is still
   * the one to make (sent with exactly the conversation the run holds): the loop reserves nothing
   * more for it. Undefined otherwise.
   */
  reservedFirst(h: RunHandle): number | undefined {
    const first = h.pendingFirstCall;
    return first && sameConversation(first.conversation, h.conversation) ? first.reservedOutput : undefined;
  }

  /**
   * The run's next model call, asking for at most `maxOutputTokens` (as reserved): the one sent with
   * its start when that was sent with exactly the conversation the run holds, and reserved with it
   * when a limit applies (`reservedFirst`); otherwise that one is stopped, and one is sent now.
   */
  async send(h: RunHandle, maxOutputTokens?: number): Promise<SentModelCall> {
    const ahead = h.takeFirstCall();
    if (ahead) {
      if (
        sameConversation(ahead.conversation, h.conversation) &&
        (ahead.reservedOutput !== undefined || !(await this.accounting.limited(h)))
      ) {
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
