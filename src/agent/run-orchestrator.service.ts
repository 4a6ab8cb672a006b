import { Inject, Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { MODEL_PROVIDER, ModelError, type ModelProvider, type ModelToolCall } from '../llm/model-provider';
import { MetricsService } from '../metrics/metrics.service';
import type { RunError } from '../persistence/entities/run.entity';
import { buildModelMessages } from './conversation';
import { RunFinalization, type FinalOutcome } from './run-finalization';
import { RunStopped, type RunHandle } from './run-handle';
import type { RunEventBody } from '../events/run-events';
import type { Usage } from '../llm/model-provider';
import {
  ConversationStore,
  type MessageRow,
  type NewToolCall,
  type ToolCallRow,
} from '../store/conversation-store.service';
import { RunStore } from '../store/run-store.service';
import { ToolStepService, toolMessage } from './tool-step.service';

/** How a stretch of driving a run ended. */
export type DriveOutcome = 'completed' | 'max_iterations' | 'requires_action' | 'cancelled' | 'failed';

interface ModelTurn {
  text: string;
  finishReason: string;
  usage: Usage;
  toolCalls: ModelToolCall[];
  omittedMessages: number;
}

/**
 * The agent loop. Each iteration runs the step's tool calls that may run, calls the model with the
 * conversation, and stores what it answered; it stops on a text answer, the iteration cap, a wait for
 * people or the client, or an abort — each a named outcome. It resumes from whatever the database
 * holds, so a run can be continued by any process.
 */
@Injectable()
export class RunOrchestrator {
  private readonly logger = new Logger(RunOrchestrator.name);

  constructor(
    @Inject(MODEL_PROVIDER) private readonly model: ModelProvider,
    private readonly steps: ToolStepService,
    private readonly store: RunStore,
    private readonly conversation: ConversationStore,
    private readonly metrics: MetricsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async drive(h: RunHandle): Promise<DriveOutcome> {
    try {
      for (;;) {
        const open =
          h.openCalls ?? (await this.conversation.unsettledToolCalls(this.store.queryable, h.run.id));
        if (open.some((c) => c.status === 'pending_approval' || c.status === 'awaiting_client')) {
          throw new Error('a run with calls still waiting cannot be driven');
        }
        await this.steps.execute(h, open);
        h.openCalls = [];
        h.signal.throwIfAborted();
        const turn = await this.callModel(h);
        const outcome = await this.storeTurn(h, turn);
        if (outcome !== 'continue') return outcome;
      }
    } catch (err) {
      return this.stop(h, err);
    }
  }

  private async callModel(h: RunHandle): Promise<ModelTurn> {
    const iteration = h.run.iterations + 1;
    const tools = h.toolset.definitions;
    const { messages, omitted } = buildModelMessages(
      h.conversation,
      { maxMessages: this.config.historyMaxMessages, maxTokens: this.config.historyMaxTokens },
      h.firstMessageSeq,
    );
    const started = performance.now();
    let firstTokenMs: number | null = null;
    h.streamingText = '';
    // A silent upstream is the provider's to time out (LLM_IDLE_TIMEOUT_MS): it throws UPSTREAM_TIMEOUT.
    try {
      const stream = this.model.stream(
        {
          model: h.run.model,
          messages,
          tools,
          // The last allowed call may not ask for tools, so the person still gets an answer.
          toolChoice: tools.length > 0 && iteration >= h.run.maxIterations ? 'none' : undefined,
        },
        h.signal,
      );
      for await (const event of stream) {
        firstTokenMs ??= performance.now() - started;
        switch (event.type) {
          case 'text':
            h.streamingText += event.delta;
            h.sink.emit({ type: 'text', delta: event.delta });
            break;
          case 'reasoning':
          case 'tool_call_delta':
            break;
          case 'finish':
            this.metrics.modelCall('ok', performance.now() - started, firstTokenMs);
            this.metrics.tokensUsed(event.usage.promptTokens, event.usage.completionTokens);
            return {
              text: h.streamingText,
              finishReason: event.finishReason,
              usage: event.usage,
              toolCalls: event.toolCalls,
              omittedMessages: omitted,
            };
        }
      }
      throw new ModelError('UPSTREAM_CONNECTION', 'The model stream ended without finishing.', true);
    } catch (err) {
      this.metrics.modelCall(
        h.signal.aborted ? 'aborted' : 'error',
        performance.now() - started,
        firstTokenMs,
      );
      throw err;
    }
  }

  /** Stores one model answer with its decided tool calls and announces it, in one transaction. */
  private async storeTurn(h: RunHandle, turn: ModelTurn): Promise<DriveOutcome | 'continue'> {
    await h.settleWrites();
    const run = h.run;
    const iteration = run.iterations + 1;
    const lastIteration = iteration >= run.maxIterations;
    const calls = await this.steps.plan(h, turn.toolCalls, lastIteration);
    const waiting = calls.some((c) => c.status === 'pending_approval' || c.status === 'awaiting_client');
    const status: DriveOutcome | 'continue' =
      calls.length === 0
        ? 'completed'
        : lastIteration
          ? 'max_iterations'
          : waiting
            ? 'requires_action'
            : 'continue';

    run.iterations = iteration;
    run.promptTokens += turn.usage.promptTokens;
    run.completionTokens += turn.usage.completionTokens;
    const assistantId = randomUUID();
    const events: RunEventBody[] = [
      ...this.steps.announce(calls),
      {
        type: 'step_finished',
        iteration,
        finishReason: turn.finishReason,
        usage: turn.usage,
        ...(turn.omittedMessages > 0 ? { omittedMessages: turn.omittedMessages } : {}),
      },
    ];
    if (status === 'completed' || status === 'max_iterations') {
      events.push({
        type: 'done',
        sessionId: run.sessionId,
        status,
        iterations: iteration,
        usage: h.usage,
        messageId: assistantId,
      });
    }

    const toolCalls = calls.map((c, i) => {
      const extraContent = turn.toolCalls[i]?.extraContent;
      return {
        id: c.callId,
        name: c.name,
        arguments: c.rawArguments,
        ...(extraContent ? { extraContent } : {}),
      };
    });
    // The driving process numbers the messages of its run itself: positions for the answer and one
    // per call, so results land in the order the model asked whenever they finish.
    const seq = h.nextMessageSeq;
    h.nextMessageSeq += 1 + calls.length;
    const content = turn.text === '' && calls.length > 0 ? null : turn.text;
    const assistant: MessageRow = {
      id: assistantId,
      seq,
      role: 'assistant',
      content,
      toolCalls: calls.length > 0 ? toolCalls : null,
      toolCallId: null,
      runId: run.id,
      createdAt: new Date(),
    };
    const answered = calls
      .filter((c) => c.settlement !== null)
      .map((c) =>
        toolMessage(run.id, { callId: c.callId, messageSeq: seq + c.position + 1 }, c.settlement!.result),
      );
    const stored = [assistant, ...answered];
    const writes = [
      this.conversation.advanceMessageSeqSql(run.sessionId, h.nextMessageSeq),
      this.conversation.insertMessagesSql(run.sessionId, run.id, stored),
    ];
    const newCalls: NewToolCall[] = calls.map((c) => ({
      id: c.id,
      runId: run.id,
      messageId: assistantId,
      callId: c.callId,
      iteration,
      position: c.position,
      name: c.name,
      rawArguments: c.rawArguments,
      arguments: typeof c.eventArguments === 'string' ? undefined : c.eventArguments,
      executor: c.executor,
      // Nothing waits: the calls that may run are run right after this commit.
      status: c.status === 'pending' && status === 'continue' ? 'running' : c.status,
      deadlineMs:
        c.status === 'pending_approval' || c.status === 'awaiting_client'
          ? this.config.approvalTimeoutMs
          : null,
      approvalReason: c.approvalReason,
      settlement: c.settlement,
    }));
    if (newCalls.length > 0) writes.push(this.conversation.insertToolCallsSql(newCalls));
    await h.sink.commitWrites(events, writes, {
      iterations: iteration,
      promptTokens: run.promptTokens,
      completionTokens: run.completionTokens,
      ...(status === 'continue'
        ? {}
        : status === 'requires_action'
          ? { status, leaseOwner: null }
          : { status, finalMessageId: assistantId, finished: true }),
    });
    h.streamingText = '';
    h.addMessages(stored);
    h.openCalls = newCalls
      .filter((c) => c.status === 'running')
      .map((c) => openCallRow(c, seq, run.sessionId));
    for (const c of calls) if (c.settlement) this.metrics.toolCall(c.name, c.settlement.errorCode ?? 'ok', 0);
    return status;
  }

  /** Ends a run that was aborted or failed, keeping what it produced. */
  private async stop(h: RunHandle, err: unknown): Promise<DriveOutcome> {
    const stopped = h.stopReason;
    const outcome: FinalOutcome =
      stopped === 'cancelled' || stopped === 'disconnected'
        ? { status: 'cancelled', why: new RunStopped(stopped).message }
        : { status: 'failed', error: stopped === 'shutdown' ? shutdownError() : toRunError(err) };
    if (outcome.status === 'failed' && stopped === null) {
      const cause = err instanceof Error ? err.message : String(err);
      this.logger.warn({
        runId: h.run.id,
        sessionId: h.session.id,
        code: outcome.error.code,
        msg: `run failed: ${cause}`,
      });
    }
    // A result whose write failed is answered again below, as an open call.
    await h.settleWrites().catch(() => undefined);
    const open = await this.conversation.unsettledToolCalls(this.store.queryable, h.run.id);
    const finalization = new RunFinalization(h.run, outcome, h.streamingText, open, h.lastAssistantMessageId);
    await h.sink.commit(finalization.events, (tx) => finalization.apply(this.store, this.conversation, tx));
    return outcome.status;
  }
}

function shutdownError(): RunError {
  return {
    code: 'SERVER_SHUTDOWN',
    message: 'The server shut down while the run was in progress.',
    retryable: true,
  };
}

function toRunError(err: unknown): RunError {
  if (err instanceof ModelError) return { code: err.code, message: err.message, retryable: err.retryable };
  return { code: 'INTERNAL_ERROR', message: 'The run failed on an internal error.', retryable: false };
}

/** A call this process stored as running a moment ago, as the loop will read it. */
function openCallRow(c: NewToolCall, assistantSeq: number, sessionId: string): ToolCallRow {
  return {
    ...c,
    approval: null,
    result: null,
    isError: false,
    errorCode: null,
    deadlineAt: null,
    createdAt: new Date(),
    messageSeq: assistantSeq + c.position + 1,
    sessionId,
  };
}
