import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { ModelError } from '../llm/model-provider';
import { ModelProviders } from '../llm/model-providers';
import type { SentModelCall } from '../llm/sent-model-call';
import type { RunError } from '../persistence/entities/run.entity';
import { ContextTooLong } from './context-window';
import type { EarlyReads } from './early-reads';
import { ModelCalls, type ModelCallSource } from './model-calls.service';
import { RunFinalization, type FinalOutcome } from './run-finalization';
import { RunStopped, type RunHandle } from './run-handle';
import { buildStepRecord, type ModelTurn, type StepRecord } from './step-record';
import { ConversationStore, type MessageRow } from '../store/conversation-store.service';
import { RunStore } from '../store/run-store.service';
import { isRunReleased, isStoreUnavailable } from '../store/store-errors';
import { ToolStepService } from './tool-step.service';
import { RunTools } from './run-tools.service';
import { RunTakeover } from './run-takeover';
import { RunAccounting } from './run-accounting';

/**
 * How a stretch of driving a run ended. `released`: this process let the run go without ending it
 * (its lease is gone: the store stayed down too long, another process has the run, or a shutdown
 * handed it over); another process takes it over once the lease has expired.
 */
export type DriveOutcome =
  | 'completed'
  | 'max_iterations'
  | 'requires_action'
  | 'cancelled'
  | 'budget_exceeded'
  | 'failed'
  | 'released';

/**
 * The agent loop: call the model with the conversation, store what it answered (one statement),
 * run the step's calls that may run, and again — until a text answer, the iteration cap, a wait for
 * people or the client, or an abort, each a named outcome. A run taken up after a wait first runs
 * its open step's approved calls. It resumes from whatever the database holds, so a run can be
 * continued by any process.
 */
@Injectable()
export class RunOrchestrator {
  private readonly logger = new Logger(RunOrchestrator.name);

  constructor(
    private readonly models: ModelProviders,
    private readonly steps: ToolStepService,
    private readonly tools: RunTools,
    private readonly store: RunStore,
    private readonly conversation: ConversationStore,
    private readonly accounting: RunAccounting,
    private readonly calls: ModelCalls,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly takeover: RunTakeover,
  ) {}

  /** The model of a session that names none (LLM_MODEL, owned by llm/). */
  get defaultModel(): string {
    return this.models.defaultModel;
  }

  /** Drives `h` until it ends or waits; `firstCall`, when given, is its next model call, already sent. */
  async drive(h: RunHandle, firstCall?: SentModelCall): Promise<DriveOutcome> {
    let sent = firstCall;
    try {
      if (h.toolset.serverToolNames.length > 0) this.tools.prepareWorkspace(h);
      // A run taken over from a lost process: its cut step closed first (it may end at its cap).
      if (h.takeOver && !(await this.takeover.prepare(h, h.takeOver))) return 'max_iterations';
      if (h.resumesStep) await this.runOpenStep(h);
      for (;;) {
        h.signal.throwIfAborted();
        // A call sent ahead went out after a check (the start's, or none applied); any other is checked now.
        if (!sent && (await this.accounting.exceeded(h))) {
          await this.accounting.endOverBudget(h);
          return 'budget_exceeded';
        }
        const { turn, early } = await this.calls.read(h, sent);
        // Once the step has what it took, the reads it did not take stop.
        const { step, next } = await this.takeStep(h, turn, early).finally(() => early.stop());
        if (step.outcome !== 'continue') return step.outcome;
        sent = next;
      }
    } catch (err) {
      return this.stop(h, err);
    }
  }

  /** The approved (or still unfinished) calls of the step a taken-up run was waiting in. */
  private async runOpenStep(h: RunHandle): Promise<void> {
    const open = await h.sink.retrying(() =>
      this.conversation.unsettledToolCalls(this.store.queryable, h.run.id),
    );
    if (open.some((c) => c.status === 'pending_approval' || c.status === 'awaiting_client')) {
      throw new Error('a run with calls still waiting cannot be driven');
    }
    await this.steps.execute(h, open).settled;
  }

  /**
   * One step: decide the model's calls (`plan`), build its record (a pure function), store it in
   * one statement (`commitStep`) and run the calls that may run — a read at once, while its call is
   * being stored (it changes nothing, so nothing is lost if the record never lands), or not again
   * when the model's stream already started it (`early`); any other call only once it is stored.
   * The handle follows what was stored. The next model call (`next`) goes out as soon as every
   * result is known, which for reads may be before the step is stored: it changes nothing, and its
   * events are read only after this step. A record that fails stops the run
   * (RunHandle.writeFailed), and with it that call.
   */
  private async takeStep(
    h: RunHandle,
    turn: ModelTurn,
    early: EarlyReads,
  ): Promise<{ step: StepRecord; next: SentModelCall | undefined }> {
    await h.settleWrites();
    const lastIteration = h.run.iterations + 1 >= h.run.maxIterations;
    const calls = await this.steps.plan(h, turn.toolCalls, lastIteration);
    const step = buildStepRecord({
      run: h.run,
      turn,
      calls,
      nextMessageSeq: h.nextMessageSeq,
      approvalTimeoutMs: this.config.approvalTimeoutMs,
    });
    // The conversation before this step: its messages join the handle once stored, after these.
    const before = h.conversation.length;
    const stored = this.commitStep(h, step);
    const execution =
      step.outcome === 'continue' ? this.steps.execute(h, step.runnable, stored, early) : null;
    // Handled from the start: it may fail before `stored` settles (and then it is awaited below).
    const settled = execution ? execution.settled : Promise.resolve();
    settled.catch(() => undefined);
    let next: SentModelCall | undefined;
    const sent = execution?.results.then(
      (results) => {
        // Under a limit the next call waits for its check, which must see this step stored.
        if (!h.signal.aborted && !this.accounting.limited(h))
          next = this.calls.sendAhead(afterStep(h, before, step, results), h.signal);
      },
      () => undefined, // the same failure is `settled`'s
    );
    try {
      await stored;
    } catch (err) {
      // The calls already running stop with the run (a failed write aborts it) and write nothing.
      await settled.catch(() => undefined);
      throw err;
    }
    h.stepStored(step);
    for (const c of calls) {
      if (c.settlement) this.steps.settledAtPlan(h, { ...c, settlement: c.settlement });
    }
    await settled;
    await sent;
    return { step, next };
  }

  /** The step's messages, calls, run changes and events: one statement, published once it commits. */
  private commitStep(h: RunHandle, step: StepRecord): Promise<void> {
    const { id: runId, sessionId } = h.run;
    const writes = [
      this.conversation.advanceMessageSeqSql(sessionId, step.nextMessageSeq),
      this.conversation.insertMessagesSql(sessionId, runId, step.messages),
    ];
    if (step.calls.length > 0) writes.push(this.conversation.insertToolCallsSql(step.calls));
    writes.push(...this.accounting.stepWrites(step.modelCall));
    return h.sink.commitWrites(step.events, writes, step.run);
  }

  /**
   * Ends a run that was aborted or failed, keeping what it produced — unless this process has let
   * the run go (its lease is gone): then it writes nothing, and a process that sees the lease
   * expired takes the run over.
   */
  private async stop(h: RunHandle, err: unknown): Promise<DriveOutcome> {
    if (isRunReleased(err)) h.writeFailed(err);
    if (h.released) return 'released';
    const stopped = h.stopReason;
    const outcome: FinalOutcome =
      stopped === 'cancelled' || stopped === 'disconnected'
        ? { status: 'cancelled', why: new RunStopped(stopped).message }
        : { status: 'failed', error: toRunError(err) };
    if (outcome.status === 'failed' && stopped === null) {
      const cause = err instanceof Error ? err.message : String(err);
      this.logger.warn({
        runId: h.run.id,
        sessionId: h.session.id,
        ...(h.trace.traceId === null ? {} : { trace_id: h.trace.traceId }),
        code: outcome.error.code,
        msg: `run failed: ${cause}`,
      });
    }
    try {
      // A result whose write failed is answered again below, as an open call.
      await h.settleWrites().catch(() => undefined);
      const open = await h.sink.retrying(() =>
        this.conversation.unsettledToolCalls(this.store.queryable, h.run.id),
      );
      const finalization = new RunFinalization(
        h.run,
        outcome,
        h.streamingText,
        open,
        h.lastAssistantMessageId,
      );
      await h.sink.commit(finalization.events, (tx) => finalization.apply(this.store, this.conversation, tx));
      if (outcome.status === 'failed') h.trace.end('failed', outcome.error.code);
      return outcome.status;
    } catch (endErr) {
      if (!isRunReleased(endErr) && !isStoreUnavailable(endErr)) throw endErr;
      h.writeFailed(endErr);
      return 'released';
    }
  }
}

function toRunError(err: unknown): RunError {
  if (err instanceof ContextTooLong) return { code: err.code, message: err.message, retryable: false };
  if (err instanceof ModelError) return { code: err.code, message: err.message, retryable: err.retryable };
  return { code: 'INTERNAL_ERROR', message: 'The run failed on an internal error.', retryable: false };
}

/**
 * The run as its next model call sees it once `step` and its calls' `results` are stored: the
 * conversation's first `before` messages (those before the step), then the step's, by position.
 */
function afterStep(h: RunHandle, before: number, step: StepRecord, results: MessageRow[]): ModelCallSource {
  const added = [...step.messages, ...results].sort((a, b) => a.seq - b.seq);
  return {
    run: { model: h.run.model, iterations: step.iteration, maxIterations: h.run.maxIterations },
    session: h.session,
    conversation: [...h.conversation.slice(0, before), ...added],
    toolset: h.toolset,
  };
}
