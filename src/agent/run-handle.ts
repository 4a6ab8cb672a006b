import type { PricedUsage } from '../events/run-events';
import type { SentModelCall } from '../llm/sent-model-call';
import type { RunEventSink } from '../events/run-event-sink';
import type { RunLease } from '../events/run-lease';
import { isRunReleased, LeaseLost, type StoreUnavailable } from '../store/store-errors';
import type { CompactionWrite, MessageRow } from '../store/conversation-store.service';
import type { RunRow } from '../store/run-store.service';
import type { SessionRow } from '../store/session-store.service';
import type { Toolset } from '../tools/toolset';
import { NO_TRACE, type RunTrace } from '../observability/run-tracing.service';
import type { RecordedCall } from './model-call-recorder.service';
import { runUsage, usageColumns } from './step-record';

export type StopReason = 'cancelled' | 'disconnected';

/** Why a run was taken over: its process died (or lost the store), or gave it up at shutdown. */
export type TakeOverReason = 'process_lost' | 'shutdown';

/** Why a run was stopped from outside, carried as the AbortSignal's reason. */
export class RunStopped extends Error {
  constructor(readonly reason: StopReason) {
    super(
      reason === 'cancelled'
        ? 'The run was cancelled.'
        : 'The run was cancelled because its client disconnected.',
    );
    this.name = 'RunStopped';
  }
}

/** A run's first model call, sent with its start (CallsAhead), as the run keeps it. */
export interface FirstCall {
  call: SentModelCall;
  /** The conversation it was sent with. */
  conversation: readonly MessageRow[];
  /** Stops this call alone. */
  stop: AbortController;
  /** Under a limit, the output tokens it was reserved for with the start (RunAccounting.reserveFirst). */
  reservedOutput?: number;
  /** Stops the run, and the call with it: the run's own. */
  controller: AbortController;
}

export interface RunHandleInit {
  run: RunRow;
  session: SessionRow;
  sink: RunEventSink;
  lease: RunLease;
  toolset: Toolset;
  /** The session's messages in order. */
  conversation: MessageRow[];
  /** Tool-call ids used in this run, and how often each (name, arguments) was asked for. */
  callIds: Set<string>;
  callCounts: Map<string, number>;
  /** Seq of the run's user message: the history budget never drops this run's own messages. */
  firstMessageSeq: number;
  /** The session's next free message position. */
  nextMessageSeq: number;
  /** The run was taken up after a wait: its open step's approved calls run before the next model call. */
  resumesStep: boolean;
  /** This process took the run over from one that died or shut down: RunTakeover prepares it first. */
  takeOver?: TakeOverReason;
  /**
   * The run's first model call, when it went out with the start: its controller is the run's, so
   * that stopping the run stops that call too; the loop's first send takes it (CallsAhead.send).
   */
  firstCall?: FirstCall;
  /** This stretch of driving the run as a trace (a no-op without tracing). */
  trace?: RunTrace;
}

/**
 * Everything this process holds about a run it drives. It is rebuilt from the database whenever a
 * process takes a run up, so nothing here is needed to continue the run elsewhere. Its state changes
 * only through its methods: a stored step (`stepStored`), a stored tool message (`addMessages`), a
 * tracked write, a stop.
 */
export class RunHandle {
  private readonly controller: AbortController;
  private firstCall: FirstCall | null;
  /** Text of the model call in progress, not stored yet (written by the model call only). */
  streamingText = '';
  /**
   * A model call of this run that ended without a step to store it (cancelled, or failed after it
   * streamed), as ModelCallRecorder counted it: the run's end stores it (RunFinalization).
   */
  unstoredCall: RecordedCall | null = null;
  /**
   * Whether a prompt waited in the session when the run's last step ended it, as that step's
   * statement saw (RunWritten); null when the run ended otherwise, or that answer was lost.
   */
  queuedAtEnd: boolean | null = null;
  readonly run: RunRow;
  readonly session: SessionRow;
  readonly sink: RunEventSink;
  readonly lease: RunLease;
  readonly toolset: Toolset;
  readonly trace: RunTrace;
  private readonly callIds: Set<string>;
  private readonly callCounts: Map<string, number>;
  readonly firstMessageSeq: number;
  readonly resumesStep: boolean;
  readonly takeOver: TakeOverReason | null;
  private readonly messages: MessageRow[];
  private lastAssistantId: string | null;
  private nextSeq: number;
  /** The session's workspace folder, once asked for (see `workspace`). */
  private workspaceFolder: Promise<string> | null = null;
  /** Writes of tool results still on their way to the database; awaited before the next step is stored. */
  private pendingWrites: Promise<void>[] = [];
  private releasedBy: LeaseLost | StoreUnavailable | null = null;
  readonly startedAt = Date.now();
  private finished!: () => void;
  readonly done = new Promise<void>((resolve) => (this.finished = resolve));

  constructor(init: RunHandleInit) {
    this.controller = init.firstCall?.controller ?? new AbortController();
    this.firstCall = init.firstCall ?? null;
    this.run = init.run;
    this.session = init.session;
    this.sink = init.sink;
    this.lease = init.lease;
    this.toolset = init.toolset;
    this.trace = init.trace ?? NO_TRACE;
    this.messages = init.conversation;
    this.callIds = init.callIds;
    this.callCounts = init.callCounts;
    this.firstMessageSeq = init.firstMessageSeq;
    this.nextSeq = init.nextMessageSeq;
    this.resumesStep = init.resumesStep;
    this.takeOver = init.takeOver ?? null;
    this.lastAssistantId =
      [...init.conversation].reverse().find((m) => m.role === 'assistant' && m.runId === init.run.id)?.id ??
      null;
  }

  /** The session's messages in order; kept in step with what is stored. */
  get conversation(): readonly MessageRow[] {
    return this.messages;
  }

  get lastAssistantMessageId(): string | null {
    return this.lastAssistantId;
  }

  /** The session's next free message position; this process numbers its run's messages while it drives it. */
  get nextMessageSeq(): number {
    return this.nextSeq;
  }

  /**
   * The session's workspace folder, made by `make` at the first ask and kept for the run; a failed
   * make is tried again at the next ask.
   */
  workspace(make: () => Promise<string>): Promise<string> {
    if (this.workspaceFolder === null) {
      const made = make();
      this.workspaceFolder = made;
      made.catch(() => {
        if (this.workspaceFolder === made) this.workspaceFolder = null;
      });
    }
    return this.workspaceFolder;
  }

  /** Whether a tool-call id already names a call of this run. */
  hasCallId(id: string): boolean {
    return this.callIds.has(id);
  }

  /** Records a call's id as used in this run. */
  useCallId(id: string): void {
    this.callIds.add(id);
  }

  /** Counts one more ask for the same tool with the same arguments (`key`); returns how many came before. */
  countCall(key: string): number {
    const seen = this.callCounts.get(key) ?? 0;
    this.callCounts.set(key, seen + 1);
    return seen;
  }

  /** A step was stored: the run's counters, the message positions and the conversation follow it. */
  stepStored(step: {
    iteration: number;
    usage: PricedUsage;
    nextMessageSeq: number;
    messages: MessageRow[];
  }): void {
    this.run.iterations = step.iteration;
    Object.assign(this.run, usageColumns(step.usage));
    this.nextSeq = step.nextMessageSeq;
    this.streamingText = '';
    this.addMessages(step.messages);
  }

  /** The first model call sent with the run's start while the loop has not taken it; null after, or when none was. */
  get pendingFirstCall(): FirstCall | null {
    return this.firstCall;
  }

  /** The first model call sent with the run's start, once (CallsAhead.send); null after, or when none was. */
  takeFirstCall(): FirstCall | null {
    const first = this.firstCall;
    this.firstCall = null;
    return first;
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The run's usage so far, with its cost (null while no call of it had a price). */
  get usage(): PricedUsage {
    return runUsage(this.run);
  }

  stop(reason: StopReason): void {
    if (!this.controller.signal.aborted) this.controller.abort(new RunStopped(reason));
  }

  get stopReason(): StopReason | null {
    const reason: unknown = this.controller.signal.reason;
    return reason instanceof RunStopped ? reason.reason : null;
  }

  /** Inserts stored messages in their place (tool results arrive out of order; seq orders them). */
  addMessages(messages: MessageRow[]): void {
    for (const m of messages) {
      let i = this.messages.length;
      while (i > 0 && this.messages[i - 1].seq > m.seq) i--;
      this.messages.splice(i, 0, m);
      if (m.role === 'assistant') this.lastAssistantId = m.id;
    }
  }

  /**
   * A compaction was stored (ContextWindow.fit): its marks, its summary in its place, and the run's
   * usage with the summary's call.
   */
  contextCompacted(write: CompactionWrite, summary: MessageRow | null, usage?: PricedUsage): void {
    if (usage) Object.assign(this.run, usageColumns(usage));
    const pruned = new Set(write.pruned);
    const summarized = new Set(write.summarized);
    for (const m of this.messages) {
      if (summarized.has(m.id)) m.context = 'summarized';
      else if (pruned.has(m.id) && !m.context) m.context = 'pruned';
    }
    if (summary) this.addMessages([summary]);
  }

  /**
   * Keeps a write that the loop awaits later (`settleWrites`). It has a handler from the start: when
   * it fails before anyone awaits it, the run is stopped at once (and the failure reaches the loop
   * through `settleWrites`) — never an unhandled rejection.
   */
  trackWrite(write: Promise<void>): void {
    this.pendingWrites.push(write);
    write.catch((err: unknown) => this.writeFailed(err));
  }

  /** Waits for the tool results still being written; throws when one of them failed. */
  async settleWrites(): Promise<void> {
    const writes = this.pendingWrites;
    this.pendingWrites = [];
    await Promise.all(writes);
  }

  /**
   * A write of this run failed. When the run is no longer this process's to write (the lease ran out
   * while the store was down, or another process has it), the process lets it go; otherwise the run
   * stops and the loop fails it.
   */
  writeFailed(err: unknown): void {
    if (isRunReleased(err)) this.releasedBy ??= err;
    if (!this.controller.signal.aborted) this.controller.abort(err);
  }

  /**
   * This process gave the run's lease up (a shutdown hands its runs over): like a lost lease, the
   * run stops and nothing more of it is written here; another process, or the next start, goes on.
   */
  handOver(): void {
    this.writeFailed(new LeaseLost(this.run.id));
  }

  /** Why this process let the run go (it must write nothing more), or null. */
  get released(): LeaseLost | StoreUnavailable | null {
    return this.releasedBy;
  }

  markFinished(): void {
    this.finished();
  }
}
