import { Injectable } from '@nestjs/common';
import type { CompactionWrite } from './compaction-write';
import type { NewMessage } from './message-inserts';
import { ConversationStore } from './conversation-store.service';
import { RunStore, type EventRecord, type RunChanges, type RunWritten } from './run-store.service';
import type { RunWrite } from './run-writes';
import type { Queryable } from './store-sql';
import type { CallSettlement, NewToolCall } from './tool-call-writes';
import type { SpentCall } from './usage-store.service';
export type { RunWritten } from './run-store.service';

/**
 * Where a run's write lands: the run, the events its sink numbered for the write (the sink numbers
 * and publishes them; the journal writes them), and the process that must still hold its lease.
 */
export interface JournalAt {
  runId: string;
  events: readonly EventRecord[];
  leaseOwner: string;
}

/** One step: the answer and the results known at once, the calls, the model call's usage, the run's changes. */
export interface StepEntry {
  sessionId: string;
  messages: NewMessage[];
  /** The session's next free message position after the step (the driving process numbers its run's messages). */
  nextMessageSeq: number;
  calls: NewToolCall[];
  spent: SpentCall;
  run: RunChanges;
}

/** A compaction ("Long sessions"): its marks and summary, the summary call's usage when one was made. */
export interface CompactionEntry {
  sessionId: string;
  compaction: CompactionWrite;
  spent: SpentCall | null;
  run: RunChanges;
}

/** A take-over: the cut model call closed as a step, or the started calls answered. */
export interface TakeOverEntry {
  sessionId: string;
  /** The cut call's streamed text, as an assistant message (null when it streamed none). */
  answer: NewMessage | null;
  /** The session's next free message position after the answer. */
  nextMessageSeq: number;
  spent: SpentCall | null;
  settled: CallSettlement[];
  run: RunChanges;
}

/** How a run that did not finish ends (RunFinalization decides it). */
export interface FinishEntry {
  sessionId: string;
  /** Its open calls, each with the error result that says why. */
  settled: CallSettlement[];
  /** The text it streamed after its last step, stored as its last assistant message. */
  partial: { id: string; content: string } | null;
  spent: SpentCall | null;
  run: RunChanges;
}

/**
 * A run's history, written by its domain verbs: each builds and runs its own statement — the
 * write, the run's changes and the events, one round trip (decision 005) — that lands only while
 * the run is leased to `at.leaseOwner` (LeaseLost otherwise). The run's changes are a typed field
 * apart from the other writes (RunWrite cannot name the `runs` row). Nothing above the store sees a
 * statement.
 */
@Injectable()
export class RunJournal {
  constructor(
    private readonly runs: RunStore,
    private readonly conversation: ConversationStore,
  ) {}

  /** A step: its messages, its calls, its model call's usage, the run's changes. */
  recordStep(at: JournalAt, s: StepEntry): Promise<RunWritten> {
    const writes: RunWrite[] = [
      { kind: 'next_message_seq', sessionId: s.sessionId, nextSeq: s.nextMessageSeq },
      { kind: 'messages', sessionId: s.sessionId, runId: at.runId, messages: s.messages },
      { kind: 'tool_calls', calls: s.calls },
      { kind: 'spent_call', ...s.spent },
    ];
    return this.write(at, writes, s.run);
  }

  /** A call's result: its row and its tool message. */
  recordResult(at: JournalAt, result: CallSettlement): Promise<RunWritten> {
    return this.write(at, [{ kind: 'settle_call', ...result }], {});
  }

  /** A compaction of the session the run works in, with its summary call's usage. */
  recordCompaction(at: JournalAt, c: CompactionEntry): Promise<RunWritten> {
    const writes: RunWrite[] = [
      { kind: 'compaction', sessionId: c.sessionId, runId: null, compaction: c.compaction },
    ];
    if (c.spent) writes.push({ kind: 'spent_call', ...c.spent });
    return this.write(at, writes, c.run);
  }

  /** What a process that took the run over closes of the lost one's work (RunTakeover). */
  recordTakeOver(at: JournalAt, t: TakeOverEntry): Promise<RunWritten> {
    const writes: RunWrite[] = [releasing(at.runId, t.spent)];
    if (t.answer) {
      writes.push(
        { kind: 'next_message_seq', sessionId: t.sessionId, nextSeq: t.nextMessageSeq },
        { kind: 'messages', sessionId: t.sessionId, runId: at.runId, messages: [t.answer] },
      );
    }
    for (const s of t.settled) writes.push({ kind: 'settle_call', ...s });
    return this.write(at, writes, t.run);
  }

  /** A change of the run's own row with its events, nothing else (e.g. ending it over a budget). */
  recordRun(at: JournalAt, run: RunChanges): Promise<RunWritten> {
    return this.write(at, [], run);
  }

  /**
   * The end of a run that did not finish, in one transaction under the lease: every open call
   * answered, the partial answer as the last assistant message, the model call it was in counted,
   * what it held reserved given back, the final status, the events.
   */
  finish(at: JournalAt, f: FinishEntry): Promise<void> {
    return this.runs.transaction(async (tx) => {
      await this.runs.assertLeased(tx, at.runId, at.leaseOwner);
      await this.finishIn(tx, at.runId, f);
      await this.runs.appendEvents(tx, at.runId, at.events);
    });
  }

  /**
   * `finish` for a run no process drives, in the caller's transaction under the run's row lock
   * (finishDetachedRun); the caller appends its events.
   */
  async finishIn(tx: Queryable, runId: string, f: FinishEntry): Promise<void> {
    const writes: RunWrite[] = f.settled.map((s) => ({ kind: 'settle_call', ...s }));
    writes.push(releasing(runId, f.spent));
    if (f.partial) {
      const seq = await this.conversation.reserveMessageSeqs(tx, f.sessionId, 1);
      writes.push({
        kind: 'messages',
        sessionId: f.sessionId,
        runId,
        messages: [{ id: f.partial.id, seq, role: 'assistant', content: f.partial.content }],
      });
    }
    await this.runs.updateRun(tx, runId, f.run, writes);
  }

  private write(at: JournalAt, writes: readonly RunWrite[], run: RunChanges): Promise<RunWritten> {
    return this.runs.writeWithEvents(this.runs.queryable, at.runId, at.events, writes, run, at.leaseOwner);
  }
}

/**
 * The write that counts the call a run ended or was taken over in, if any, and gives back whatever
 * the run holds reserved — a call refused before it streamed, or one whose process died before it
 * was sent, holds a reservation too. A run that ends by its steps gave it back with its last one.
 */
function releasing(runId: string, spent: SpentCall | null): RunWrite {
  return spent ? { kind: 'spent_call', ...spent, release: runId } : { kind: 'release_reservations', runId };
}
