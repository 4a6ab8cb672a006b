import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { ModelCalls } from '../agent/model-calls.service';
import type { SentModelCall } from '../llm/sent-model-call';
import type { Toolset } from '../tools/toolset';
import { ConversationStore, type MessageRow } from '../store/conversation-store.service';
import type { KeyRunCounts, RunStart } from '../store/run-start-store.service';
import type { NewSession, SessionRow } from '../store/session-store.service';
import { newSessionConversation, storedMessage } from './start-conversation';

/** Keys remembered as having had room at their last start here. */
const KEYS_REMEMBERED = 10_000;

/** A run's first model call, sent before its run was stored, and what stops it. */
export interface FirstCall {
  call: SentModelCall;
  controller: AbortController;
}

/** A first model call on its way while the start is stored (FirstCallsAhead.send). */
export interface CallAhead {
  /** Stops the call, or keeps it from being sent when its conversation is still being read. */
  controller: AbortController;
  /** The call and the conversation it was sent with; undefined when it was not sent. */
  sent: Promise<{ call: SentModelCall; conversation: readonly MessageRow[] } | undefined>;
}

/**
 * A run's first model call, sent before its start is stored when the start will most likely be
 * admitted — the upstream then works while the start commits, which takes the commit off the way
 * to the first text. Likely means: the process takes runs (the caller says), and the key's last
 * start here left room for another under both limits. A start that then stores nothing stops the
 * call (`startFailed`), so a key at its limits costs the upstream nothing and one that reaches them
 * at most a call stopped within the start's round trip; the run keeps the call only when it was
 * sent with the conversation the store holds (`keep`).
 *
 * Its gain, with the next call sent after a step (ModelCalls.sendAhead): the added
 * time to first text at c=16 is 2.4–3.4 ms with both, 5.5–7.3 ms with neither (`node bench/run.mjs
 * --only=latency`, three interleaved pairs each; the target is 5 ms).
 */
@Injectable()
export class FirstCallsAhead {
  /** Keys whose last start in this process left room for one more run under both limits. */
  private readonly keysWithRoom = new Set<string>();

  constructor(
    private readonly calls: ModelCalls,
    private readonly conversation: ConversationStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Sends `start`'s first model call, unless it answers again (`regenerate`) or its key may be near
   * a limit. A prompt that opens a session is sent at once (its conversation is the system message
   * and the prompt); a prompt to an existing session once its conversation is read, beside the
   * start statement.
   */
  send(start: RunStart, session: SessionRow | NewSession, toolset: Toolset): CallAhead | undefined {
    const { run, answers } = start;
    if (answers.kind === 'regenerate' || !this.keysWithRoom.has(run.owner)) return undefined;
    const controller = new AbortController();
    const send = (conversation: MessageRow[]) => {
      // The start failed while the conversation was read: nothing to send.
      if (controller.signal.aborted) return undefined;
      // A conversation that needs room made first is sent by the run itself (ContextWindow.fit).
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
          conversation,
          toolset,
        },
        controller.signal,
      );
      return call && { call, conversation };
    };
    if (answers.kind === 'new-session') {
      const conversation = newSessionConversation(answers, run.id, new Date());
      return { controller, sent: Promise.resolve(send(conversation)) };
    }
    // Where the start statement will put the prompt, unless a message lands before it (then the
    // stored conversation differs and the call is not kept).
    const promptSeq = (session as SessionRow).nextMessageSeq;
    const sent = this.conversation.runConversation(run.sessionId).then(
      (history) =>
        send([
          ...history.filter((m) => m.seq < promptSeq),
          storedMessage(answers.prompt, 'user', promptSeq, run.id, new Date()),
        ]),
      () => undefined, // the run sends its own call
    );
    return { controller, sent };
  }

  /**
   * The call sent ahead, when it was sent with exactly the conversation the store holds for the run
   * (messages are only ever added, so the same ids in the same places are the same conversation);
   * otherwise it is stopped, and the run sends its own.
   */
  async keep(
    ahead: CallAhead | undefined,
    conversation: readonly MessageRow[],
  ): Promise<FirstCall | undefined> {
    if (!ahead) return undefined;
    const sent = await ahead.sent;
    const same =
      sent !== undefined &&
      sent.conversation.length === conversation.length &&
      sent.conversation.every(
        (m, i) =>
          m.id === conversation[i].id &&
          m.seq === conversation[i].seq &&
          m.context === conversation[i].context,
      );
    if (same) return { call: sent.call, controller: ahead.controller };
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
}
