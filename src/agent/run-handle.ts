import type { Usage } from '../llm/model-provider';
import type { RunEventSink } from '../events/run-event-sink';
import type { MessageRow, ToolCallRow } from '../store/conversation-store.service';
import type { RunRow } from '../store/run-store.service';
import type { SessionRow } from '../store/session-store.service';
import type { Toolset } from '../tools/toolset';

export type StopReason = 'cancelled' | 'disconnected' | 'shutdown';

/** Why a run was stopped from outside, carried as the AbortSignal's reason. */
export class RunStopped extends Error {
  constructor(readonly reason: StopReason) {
    super(
      reason === 'cancelled'
        ? 'The run was cancelled.'
        : reason === 'disconnected'
          ? 'The run was cancelled because its client disconnected.'
          : 'The server shut down while the run was in progress.',
    );
    this.name = 'RunStopped';
  }
}

/**
 * Everything this process holds about a run it drives. It is rebuilt from the database whenever a
 * process takes a run up, so nothing here is needed to continue the run elsewhere.
 */
export class RunHandle {
  private readonly controller = new AbortController();
  /** Text of the model call in progress, not stored yet. */
  streamingText = '';
  lastAssistantMessageId: string | null;
  /**
   * The open step's calls when this process knows them (it just stored them), so the loop need not
   * ask the database; null when the run was just taken up and they must be read.
   */
  openCalls: ToolCallRow[] | null = null;
  /** Writes of tool results still on their way to the database; awaited before the next step is stored. */
  pendingWrites: Promise<void>[] = [];
  /** The session's next message position; this process numbers its run's messages while it drives it. */
  nextMessageSeq = 0;
  readonly startedAt = Date.now();
  private finished!: () => void;
  readonly done = new Promise<void>((resolve) => (this.finished = resolve));

  constructor(
    readonly run: RunRow,
    readonly session: SessionRow,
    readonly sink: RunEventSink,
    readonly toolset: Toolset,
    /** The session's messages in order; kept in step with what is stored. */
    readonly conversation: MessageRow[],
    /** Tool-call ids used in this run, and how often each (name, arguments) was asked for. */
    readonly callIds: Set<string>,
    readonly callCounts: Map<string, number>,
    /** Seq of the run's user message: the history budget never drops this run's own messages. */
    readonly firstMessageSeq: number,
  ) {
    this.lastAssistantMessageId =
      [...conversation].reverse().find((m) => m.role === 'assistant' && m.runId === run.id)?.id ?? null;
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get usage(): Usage {
    return { promptTokens: this.run.promptTokens, completionTokens: this.run.completionTokens };
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
      let i = this.conversation.length;
      while (i > 0 && this.conversation[i - 1].seq > m.seq) i--;
      this.conversation.splice(i, 0, m);
      if (m.role === 'assistant') this.lastAssistantMessageId = m.id;
    }
  }

  /** Waits for the tool results still being written; throws when one of them failed. */
  async settleWrites(): Promise<void> {
    const writes = this.pendingWrites;
    this.pendingWrites = [];
    await Promise.all(writes);
  }

  markFinished(): void {
    this.finished();
  }
}
