import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { ModelError } from '../llm/model-provider';
import type { RunError } from '../persistence/entities/run.entity';
import { ContextTooLong } from './context-window.service';
import { CallsAhead } from './calls-ahead.service';
import { ModelCalls } from './model-calls.service';
import { RunFinalization, type FinalOutcome } from './run-finalization';
import { RunStopped, type RunHandle } from './run-handle';
import { buildStepRecord, isWaiting, withCallUsage, type ModelTurn, type StepRecord } from './step-record';
import { ConversationStore } from '../store/conversation-store.service';
import { RunJournal } from '../store/run-journal.service';
import { RunStore } from '../store/run-store.service';
import { isRunReleased, isStoreUnavailable } from '../store/store-errors';
import { ToolSteps, type PlannedCall } from './tool-steps.service';
import { RunTools } from './run-tools.service';
import { RunTakeover } from './run-takeover.service';
import { judgeAnswer } from './structured-output';
import { BudgetSpent, RunAccounting, type ReservedAhead } from './run-accounting.service';
import { NextCalls } from './next-calls.service';
import { RecordedFailure } from './recorded-runs.service';
import type { NewModelCall } from '../store/usage-store.service';

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
 * The agent loop, one step after another: check the limits, fit the window, send, read, record the
 * step, run its tools, record their results — until a text answer, the iteration cap, a wait for
 * people or the client, or an abort, each a named outcome. A run taken up after a wait first runs
 * its open step's approved calls. It resumes from whatever the database holds, so a run can be
 * continued by any process.
 */
@Injectable()
export class RunOrchestrator {
  private readonly logger = new Logger(RunOrchestrator.name);

  constructor(
    private readonly steps: ToolSteps,
    private readonly tools: RunTools,
    private readonly store: RunStore,
    private readonly conversation: ConversationStore,
    private readonly accounting: RunAccounting,
    private readonly calls: ModelCalls,
    private readonly sending: CallsAhead,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly takeover: RunTakeover,
    private readonly journal: RunJournal,
    private readonly next: NextCalls,
  ) {}

  /**
   * Drives `h` until it ends or waits. Each step, top to bottom: check the limits and fit the window
   * (the call reserved under a limit), send, read, record the step, run its tools, record their
   * results — the step ends when all of it is stored. What was sent ahead is CallsAhead's to hand
   * over.
   */
  async drive(h: RunHandle): Promise<DriveOutcome> {
    try {
      if (h.toolset.serverToolNames.length > 0) this.tools.prepareWorkspace(h);
      // A run taken over from a lost process: its cut step closed first (it may end at its cap).
      if (h.takeOver && !(await this.takeover.prepare(h, h.takeOver))) return 'max_iterations';
      if (h.resumesStep) await this.runOpenStep(h);
      let ahead: Promise<ReservedAhead | undefined> | undefined;
      for (;;) {
        h.signal.throwIfAborted();
        const maxOutputTokens = await this.next.ready(h, ahead);
        const call = await this.sending.send(h, maxOutputTokens);
        const turn = await this.calls.read(h, call, maxOutputTokens);
        const { step, calls } = await this.planStep(h, turn);
        const reserveAhead = this.next.aheadOf(h, step);
        const stored = this.commitStep(h, step, calls, reserveAhead !== undefined);
        ahead = reserveAhead?.(stored);
        const ran = step.outcome === 'continue' ? this.steps.execute(h, step.runnable, stored) : NOTHING_RAN;
        await stepEnded(stored, ran);
        if (step.outcome === 'invalid_output') {
          h.trace.end('failed', 'INVALID_OUTPUT');
          return 'failed';
        }
        if (step.outcome !== 'continue') return step.outcome;
      }
    } catch (err) {
      return err instanceof BudgetSpent ? this.endOverBudget(h) : this.stop(h, err);
    }
  }

  /** Ends the run whose next model call (a step's or a summary's) does not fit a limit: `budget_exceeded`. */
  private async endOverBudget(h: RunHandle): Promise<DriveOutcome> {
    try {
      await this.accounting.endOverBudget(h);
      return 'budget_exceeded';
    } catch (err) {
      return this.stop(h, err);
    }
  }

  /** The approved (or still unfinished) calls of the step a taken-up run was waiting in. */
  private async runOpenStep(h: RunHandle): Promise<void> {
    const open = await h.sink.retrying(() =>
      this.conversation.unsettledToolCalls(this.store.queryable, h.run.id),
    );
    if (open.some((c) => isWaiting(c.status))) {
      throw new Error('a run with calls still waiting cannot be driven');
    }
    await this.steps.execute(h, open);
  }

  /**
   * Decides the model's calls (run, wait for someone, or refuse) and builds the step's record from
   * them, a pure function — once the previous step's results are stored, since the record follows
   * them in the session. When one of those writes failed, this call is left to the run's end to count.
   */
  private async planStep(h: RunHandle, turn: ModelTurn): Promise<{ step: StepRecord; calls: PlannedCall[] }> {
    try {
      await h.settleWrites();
    } catch (err) {
      // A write before it failed once this call had ended: the call is counted with the run's end.
      if (!turn.replayed) {
        h.unstoredCall = { usage: turn.usage, costUsd: turn.modelCall.costUsd, row: turn.modelCall };
      }
      throw err;
    }
    const lastIteration = h.run.iterations + 1 >= h.run.maxIterations;
    const calls = await this.steps.plan(h, turn.toolCalls, lastIteration);
    const format = h.run.responseFormat;
    const step = buildStepRecord({
      run: h.run,
      turn,
      calls,
      // A final answer of a run with a responseFormat: checked, sent back once, or the end.
      answer:
        format && calls.length === 0
          ? judgeAnswer(format, turn.text, { outputCorrections: h.run.outputCorrections, lastIteration })
          : undefined,
      nextMessageSeq: h.nextMessageSeq,
      approvalTimeoutMs: this.config.approvalTimeoutMs,
    });
    return { step, calls };
  }

  /**
   * Stores the step — messages, calls, run changes, usage and events — in one statement, its events
   * published once it commits (`keepReservation`: giving back nothing the run holds reserved, as its
   * next call is reserved ahead); then the handle follows what was stored, and the calls answered
   * when planned (refused, invalid…) are counted and traced. A record that fails stops the run
   * (RunHandle.writeFailed), and with it whatever the step started.
   */
  private async commitStep(
    h: RunHandle,
    step: StepRecord,
    calls: readonly PlannedCall[],
    keepReservation: boolean,
  ): Promise<void> {
    const spent = await this.accounting.spentIn(
      h,
      step.replayed ? spendsNothing(step.modelCall) : step.modelCall,
      keepReservation,
    );
    await h.sink.record(step.events, async (at) => {
      const written = await this.journal.recordStep(at, {
        sessionId: h.run.sessionId,
        messages: step.messages,
        nextMessageSeq: step.nextMessageSeq,
        calls: step.calls,
        spent,
        run: step.run,
      });
      h.queuedAtEnd = written.queuedInSession;
    });
    h.stepStored(step);
    if (step.run.outputCorrections !== undefined) h.run.outputCorrections = step.run.outputCorrections;
    for (const c of calls) {
      if (c.settlement) this.steps.settledAtPlan(h, { ...c, settlement: c.settlement });
    }
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
        : err instanceof RecordedFailure
          ? err.outcome
          : { status: 'failed', error: toRunError(err) };
    if (outcome.status === 'failed' && stopped === null && !(err instanceof RecordedFailure)) {
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
      const lost = h.unstoredCall;
      const finalization = new RunFinalization(
        h.run,
        outcome,
        h.streamingText,
        open,
        h.lastAssistantMessageId,
        lost
          ? {
              runUsage: withCallUsage(h.usage, lost.usage, lost.costUsd),
              spent: this.accounting.spent(lost.row),
            }
          : undefined,
      );
      await h.sink.record(finalization.events, (at) => this.journal.finish(at, finalization.entry));
      if (outcome.status === 'failed') h.trace.end('failed', outcome.error.code);
      return outcome.status;
    } catch (endErr) {
      if (!isRunReleased(endErr) && !isStoreUnavailable(endErr)) throw endErr;
      h.writeFailed(endErr);
      return 'released';
    }
  }
}

/** A step whose calls do not run now (it ends the run, or waits): nothing to wait for. */
const NOTHING_RAN = Promise.resolve();

/**
 * Waits for the step's record and its calls' results together, so that neither failure goes
 * unheard. When the record failed, no call ran (each waits for it): the record's failure is the one
 * reported.
 */
async function stepEnded(stored: Promise<void>, ran: Promise<void>): Promise<void> {
  const [record, calls] = await Promise.allSettled([stored, ran]);
  if (record.status === 'rejected') throw record.reason;
  if (calls.status === 'rejected') throw calls.reason;
}

/** A replayed step's usage row: the original's model, nothing spent (no model was called). */
function spendsNothing(call: NewModelCall): NewModelCall {
  return {
    ...call,
    promptTokens: 0,
    completionTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    costUsd: call.costUsd === null ? null : 0,
    estimated: false,
  };
}

function toRunError(err: unknown): RunError {
  if (err instanceof ContextTooLong) return { code: err.code, message: err.message, retryable: false };
  if (err instanceof ModelError) return { code: err.code, message: err.message, retryable: err.retryable };
  return { code: 'INTERNAL_ERROR', message: 'The run failed on an internal error.', retryable: false };
}
