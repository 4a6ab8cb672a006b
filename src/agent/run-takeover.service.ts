import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { RunEventBody } from '../events/run-events';
import { ConversationStore, type MessageRow, type ToolCallRow } from '../store/conversation-store.service';
import type { ModelToolDefinition } from '../llm/model-provider';
import { NO_TRACE, type RunTrace } from '../observability/run-tracing.service';
import { RunJournal } from '../store/run-journal.service';
import { RunStore, type RunChanges, type RunRow } from '../store/run-store.service';
import type { CallSettlement } from '../store/conversation-store.service';
import type { SpentCall } from '../store/usage-store.service';
import { modelMessages } from './conversation';
import { ModelCallRecorder, type RecordedCall } from './model-call-recorder.service';
import { RunAccounting } from './run-accounting.service';
import type { RunHandle, TakeOverReason } from './run-handle';
import type { LostCall } from './run-finalization';
import { runUsage, usageColumns, withCallUsage, type RunUsageColumns } from './step-record';
import { errorSettlement, resultEvent, toolMessage } from './tool-results';

export type { TakeOverReason } from './run-handle';

/** What a call with an effect that was cut by the loss of its process tells the model. */
export const INTERRUPTED_RESULT = 'the server stopped while this ran; whether it had an effect is unknown';

/**
 * Prepares a run this process has just taken over from one that died or shut down, from what is
 * stored alone, in one statement; then the loop drives it on as it drives a run taken up after a
 * wait (RunOrchestrator.drive).
 *
 * - When the lost process was in a model call (no call of the run is open), that call is closed as
 *   a step: `step_finished` with `finishReason` `interrupted`, counted (its usage estimated from
 *   the stored conversation it was sent and the text it streamed), and the text the streams
 *   showed (rebuilt from the stored `text` events after the last step) stored as an assistant
 *   message the model gets. Deltas it had not stored were never shown, so nothing is said twice.
 * - When it was running the step's calls, a started call without a stored result that may have had
 *   an effect gets an `INTERRUPTED` error result (the model decides whether to ask again); a read,
 *   and a call that never started, stays open and runs again when the loop takes up the open step.
 * - Then `run_resumed`. When the interrupted step was the last the cap allowed, the run ends
 *   `max_iterations` instead, as it would have after that step.
 */
@Injectable()
export class RunTakeover {
  constructor(
    private readonly store: RunStore,
    private readonly conversation: ConversationStore,
    private readonly recorder: ModelCallRecorder,
    private readonly accounting: RunAccounting,
    private readonly journal: RunJournal,
  ) {}

  /** Stores the take-over of `h`; returns whether the run goes on (false: it ended at its cap). */
  async prepare(h: RunHandle, reason: TakeOverReason): Promise<boolean> {
    const { id: runId, sessionId } = h.run;
    const [open, partialText] = await h.sink.retrying(() =>
      Promise.all([
        this.conversation.unsettledToolCalls(this.store.queryable, runId),
        this.store.unfinishedText(this.store.queryable, runId),
      ]),
    );
    const events: RunEventBody[] = [];
    const settled: CallSettlement[] = [];
    let spent: SpentCall | null = null;
    let answer: MessageRow | null = null;
    const messages: MessageRow[] = [];
    const changes: RunChanges = {};
    let iteration = h.run.iterations;
    let nextMessageSeq = h.nextMessageSeq;
    let goesOn = true;

    let usage = h.usage;
    if (open.length === 0) {
      iteration += 1;
      const cut = await this.interruptedCall(
        h.run,
        h.conversation,
        h.toolset.definitions,
        partialText,
        h.trace,
      );
      usage = cut.runUsage;
      spent = cut.spent;
      Object.assign(changes, usageColumns(usage));
      events.push({
        type: 'step_finished',
        iteration,
        finishReason: 'interrupted',
        usage: { ...cut.call.usage, costUsd: cut.call.costUsd },
      });
      if (partialText !== '') {
        answer = {
          id: randomUUID(),
          seq: nextMessageSeq++,
          role: 'assistant',
          content: partialText,
          toolCalls: null,
          toolCallId: null,
          runId,
          createdAt: new Date(),
        };
        messages.push(answer);
      }
      changes.iterations = iteration;
      if (iteration >= h.run.maxIterations) {
        goesOn = false;
        const messageId = answer?.id ?? h.lastAssistantMessageId;
        events.push({
          type: 'done',
          sessionId,
          status: 'max_iterations',
          iterations: iteration,
          usage,
          messageId,
        });
        Object.assign(changes, { status: 'max_iterations', finalMessageId: messageId, finished: true });
      }
    } else {
      const settlement = errorSettlement('INTERRUPTED', INTERRUPTED_RESULT);
      for (const call of open.filter((c) => this.interrupted(h, c))) {
        const message = toolMessage(runId, call, settlement.result);
        messages.push(message);
        settled.push({ call, settlement, messageId: message.id });
        events.push(resultEvent(call.callId, call.name, settlement));
      }
    }
    if (goesOn) events.push({ type: 'run_resumed', reason, iteration: iteration + 1 });

    await h.sink.record(events, (at) =>
      this.journal.recordTakeOver(at, { sessionId, answer, nextMessageSeq, spent, settled, run: changes }),
    );
    h.stepStored({ iteration, usage, nextMessageSeq, messages });
    return goesOn;
  }

  /**
   * The model call a lost process was in (no call of its step open), counted: its usage never came
   * (it comes with a call's end), so it is estimated from what is stored — the conversation it was
   * sent, the text it streamed — like any call the provider did not report (ModelCallRecorder).
   * Also for a run ended without being taken over (a cancel while no process drives it).
   */
  async interruptedCall(
    run: Pick<RunRow, 'id' | 'sessionId' | 'owner' | 'endUser' | 'model' | 'iterations'> & RunUsageColumns,
    conversation: readonly MessageRow[],
    tools: ModelToolDefinition[],
    partialText: string,
    trace: RunTrace = NO_TRACE,
  ): Promise<LostCall & { call: RecordedCall }> {
    const call = await this.recorder.record({
      of: { runId: run.id, sessionId: run.sessionId, owner: run.owner, endUser: run.endUser },
      iteration: run.iterations + 1,
      request: { model: run.model, messages: modelMessages(conversation), tools },
      streamed: partialText,
      reported: null,
      sentAt: null,
      firstTokenMs: null,
      failure: 'interrupted',
      trace,
    });
    return {
      call,
      runUsage: withCallUsage(runUsage(run), call.usage, call.costUsd),
      spent: this.accounting.spent(call.row),
    };
  }

  /**
   * A call of the lost process's step that must not simply run again: a server call that had
   * started (its row says `running`) and may change something. A read this process offers runs
   * again; a call that was only approved, or waits for a person or the client, never started. A
   * tool this process does not offer now (its MCP server is not connected yet) is not known to be
   * a read: it is answered, not run.
   */
  private interrupted(h: RunHandle, call: ToolCallRow): boolean {
    if (call.status !== 'running' || call.executor !== 'server') return false;
    const lookup = h.toolset.lookup(call.name);
    const offered = h.toolset.serverToolNames.includes(call.name);
    return !offered || lookup.kind !== 'server' || lookup.tool.kind !== 'read';
  }
}
