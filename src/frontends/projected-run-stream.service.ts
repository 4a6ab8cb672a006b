import { Injectable } from '@nestjs/common';
import { STREAM_ENDED } from '../sse/event-streams.service';
import { RunEventHub } from '../events/run-event-hub.service';
import type { RunEvent, Usage } from '../events/run-events';
import { ConversationStore } from '../store/conversation-store.service';
import { RunStore } from '../store/run-store.service';

/** A call the run waits for, as `GET /v1/runs/:id` shows it. */
export interface PendingCall {
  toolCallId: string;
  name: string;
  arguments: unknown;
  executor: 'server' | 'client';
  waitingFor: 'approval' | 'result';
}

/** A protocol's projection of one stream of a run: Loopwright events in, protocol chunks out. */
export interface Projector<C> {
  event(e: RunEvent): C[];
  /** True while some call may be waiting for a person or the client (then the store is asked). */
  mayWait(): boolean;
  /** Whether the projection has ended the stream (the run's `done` or `error`). */
  ended(): boolean;
  /** How the stream ends when the run waits. */
  waiting(usage: Usage, pending: PendingCall[]): C[];
}

/**
 * While the stream's calls may wait, how often the store is asked whether the run went to wait with
 * nothing more to say (the event log has no "waiting" event: the run's status tells).
 */
const WAIT_CHECK_MS = 200;

/**
 * Follows a run's stored event log (RunEventHub, as every other stream does) through a projection,
 * and ends the stream when the run starts waiting: the frontend protocols answer an approval or a
 * client result with a new request, not on the open stream.
 */
@Injectable()
export class ProjectedRunStream {
  constructor(
    private readonly hub: RunEventHub,
    private readonly store: RunStore,
    private readonly conversation: ConversationStore,
  ) {}

  async *follow<C>(runId: string, projector: Projector<C>, signal: AbortSignal): AsyncGenerator<C[]> {
    const stop = new AbortController();
    const onAbort = () => stop.abort(STREAM_ENDED);
    signal.addEventListener('abort', onAbort, { once: true });
    const events = this.hub.follow(runId, 0, stop.signal);
    let lastSeq = 0;
    try {
      let next = events.next();
      while (!stop.signal.aborted) {
        const r = projector.mayWait()
          ? await Promise.race([next, delay(WAIT_CHECK_MS, stop.signal)])
          : await next;
        if (r !== null) {
          if (r.done) return;
          next = events.next();
          const out: C[] = [];
          for (const record of r.value) {
            const e = JSON.parse(record.data) as RunEvent;
            lastSeq = e.seq;
            out.push(...projector.event(e));
          }
          if (out.length > 0) yield out;
          if (projector.ended()) return;
        }
        if (projector.mayWait()) {
          const run = await this.store.findRun(runId);
          if (run?.status === 'requires_action' && run.lastSeq <= lastSeq) {
            // A child run's waiting calls are this run's too ("Agents and delegation").
            const calls = await this.conversation.waitingCallsBelow(this.store.queryable, runId);
            const pending: PendingCall[] = calls.map((c) => ({
              toolCallId: c.callId,
              name: c.name,
              arguments: c.arguments ?? c.rawArguments,
              executor: c.executor,
              waitingFor: c.status === 'pending_approval' ? 'approval' : 'result',
            }));
            // Waiting for its child runs alone, the run goes on without anyone: keep following.
            if (pending.length === 0) continue;
            yield projector.waiting(
              { promptTokens: run.promptTokens, completionTokens: run.completionTokens },
              pending,
            );
            return;
          }
        }
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      stop.abort(STREAM_ENDED);
      // The hub's generator may be parked on a wait; the abort above ends it.
      void events.return(undefined).catch(() => undefined);
    }
  }
}

function delay(ms: number, signal: AbortSignal): Promise<null> {
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(null), ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve(null);
      },
      { once: true },
    );
  });
}
