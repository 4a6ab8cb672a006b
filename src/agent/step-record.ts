import { randomUUID } from 'node:crypto';
import type { ModelToolCall, ProviderData, Usage } from '../llm/model-provider';
import type { StoredToolCall } from '../persistence/entities/message.entity';
import type { PricedUsage, RunEventBody } from '../events/run-events';
import { addUsd } from '../llm/model-prices.service';
import type { NewModelCall } from '../store/usage-store.service';
import type { ToolCallStatus } from '../persistence/entities/tool-call.entity';
import type {
  MessageRow,
  NewToolCall,
  ToolCallRow,
  ToolCallSettlement,
} from '../store/conversation-store.service';
import type { RunChanges, RunRow } from '../store/run-store.service';
import type { RunError } from '../persistence/entities/run.entity';
import { correctionPrompt, invalidOutputMessage, type AnswerCheck } from './structured-output';
import { resultEvent, toolMessage } from './tool-results';

/** A call the model asked for, decided: run it, wait for someone, or answer it at once with an error. */
export interface PlannedCall {
  id: string;
  callId: string;
  position: number;
  name: string;
  rawArguments: string;
  /** Parsed arguments, or the raw text when they are not a JSON object. */
  eventArguments: unknown;
  executor: 'server' | 'client';
  status: Extract<
    ToolCallStatus,
    'pending' | 'pending_approval' | 'awaiting_client' | 'awaiting_child' | 'error'
  >;
  settlement: ToolCallSettlement | null;
  approvalReason: string | null;
}

/** One model call's answer, as the loop got it. */
export interface ModelTurn {
  text: string;
  finishReason: string;
  usage: Usage;
  toolCalls: ModelToolCall[];
  /** This call's row of usage (model, tokens, cost), stored with the step. */
  modelCall: NewModelCall;
  /**
   * Answered from a replayed run's record ("Fork and replay"): its events carry the original's
   * usage, but it spends nothing — no model was called.
   */
  replayed?: boolean;
  /** The reasoning the model showed (stored with the answer, never as its content). */
  reasoning?: string;
  /** What the answering provider needs back with this answer. */
  providerData?: ProviderData;
  /** The `provider/model` that answered. */
  model?: string;
}

/**
 * What a stored step leads to, each a named stop condition:
 * - `completed`: the model answered without asking for tools — the run's answer;
 * - `max_iterations`: it was the last allowed model call (its calls are refused, not run);
 * - `requires_action`: a call waits for a person's approval, the client's result or a child run;
 * - `continue`: the step's calls run now, then the model is called again (also after an answer
 *   that did not match the run's responseFormat, sent back once with what is wrong);
 * - `invalid_output`: the answer did not match the run's responseFormat, and no correction is left.
 */
export type StepOutcome = 'continue' | 'completed' | 'max_iterations' | 'requires_action' | 'invalid_output';

export function stepOutcome(calls: readonly PlannedCall[], lastIteration: boolean): StepOutcome {
  if (calls.length === 0) return 'completed';
  if (lastIteration) return 'max_iterations';
  if (calls.some((c) => isWaiting(c.status))) return 'requires_action';
  return 'continue';
}

/** A call that waits for someone: a person, the client or a child run. */
export function isWaiting(status: string): boolean {
  return status === 'pending_approval' || status === 'awaiting_client' || status === 'awaiting_child';
}

/** The events that announce a planned step, in the model's order. */
export function announceCalls(calls: readonly PlannedCall[]): RunEventBody[] {
  const events: RunEventBody[] = [];
  for (const c of calls) {
    events.push({
      type: 'tool_call_start',
      toolCallId: c.callId,
      name: c.name,
      arguments: c.eventArguments,
      executor: c.executor,
    });
    if (c.status === 'pending_approval') {
      events.push({
        type: 'tool_approval_required',
        toolCallId: c.callId,
        name: c.name,
        arguments: c.eventArguments,
        reason: c.approvalReason ?? '',
      });
    }
    if (c.settlement) events.push(resultEvent(c.callId, c.name, c.settlement));
  }
  return events;
}

/** Everything one step stores, in one statement, and what the loop does next. */
export interface StepRecord {
  outcome: StepOutcome;
  iteration: number;
  /** The run's usage with this step's. */
  usage: PricedUsage;
  events: RunEventBody[];
  /** The answer, then the immediate (error) results at their reserved positions. */
  messages: MessageRow[];
  assistantId: string;
  calls: NewToolCall[];
  run: RunChanges;
  /** The session's next free message position after this step. */
  nextMessageSeq: number;
  /** The calls that run right after the commit, as the loop will read them. */
  runnable: ToolCallRow[];
  /** The model call's usage row. */
  modelCall: NewModelCall;
  /** Answered from a replayed run's record: the row counts nothing (ModelTurn.replayed). */
  replayed: boolean;
}

/** The run's counters that make its usage. */
export type RunUsageColumns = Pick<
  RunRow,
  | 'promptTokens'
  | 'completionTokens'
  | 'cacheReadTokens'
  | 'cacheWriteTokens'
  | 'reasoningTokens'
  | 'usageEstimated'
  | 'costUsd'
>;

/**
 * A run's usage as its events and GET /v1/runs/:id show it, from its counters: the cache and
 * reasoning counts where some call reported them, `estimated` where some call's usage was.
 */
export function runUsage(run: RunUsageColumns): PricedUsage {
  return {
    promptTokens: run.promptTokens,
    completionTokens: run.completionTokens,
    ...(run.cacheReadTokens > 0 ? { cacheReadTokens: run.cacheReadTokens } : {}),
    ...(run.cacheWriteTokens > 0 ? { cacheWriteTokens: run.cacheWriteTokens } : {}),
    ...(run.reasoningTokens > 0 ? { reasoningTokens: run.reasoningTokens } : {}),
    ...(run.usageEstimated ? { estimated: true } : {}),
    costUsd: run.costUsd,
  };
}

/** The run's counters holding `usage`. */
export function usageColumns(usage: PricedUsage): RunUsageColumns {
  return {
    promptTokens: usage.promptTokens,
    completionTokens: usage.completionTokens,
    cacheReadTokens: usage.cacheReadTokens ?? 0,
    cacheWriteTokens: usage.cacheWriteTokens ?? 0,
    reasoningTokens: usage.reasoningTokens ?? 0,
    usageEstimated: usage.estimated === true,
    costUsd: usage.costUsd,
  };
}

/** A run's usage with one more model call's (every count, exact cost when it has a price, estimated if either is). */
export function withCallUsage(run: PricedUsage, call: Usage, callCostUsd: number | null): PricedUsage {
  return runUsage({
    promptTokens: run.promptTokens + call.promptTokens,
    completionTokens: run.completionTokens + call.completionTokens,
    cacheReadTokens: (run.cacheReadTokens ?? 0) + (call.cacheReadTokens ?? 0),
    cacheWriteTokens: (run.cacheWriteTokens ?? 0) + (call.cacheWriteTokens ?? 0),
    reasoningTokens: (run.reasoningTokens ?? 0) + (call.reasoningTokens ?? 0),
    usageEstimated: run.estimated === true || call.estimated === true,
    // Unknown only while no call of the run had a price.
    costUsd: addUsd(run.costUsd, callCostUsd),
  });
}

export interface StepInput {
  run: Pick<RunRow, 'id' | 'sessionId' | 'iterations' | 'maxIterations'> &
    Partial<Pick<RunRow, 'outputCorrections'>> &
    RunUsageColumns;
  turn: ModelTurn;
  calls: readonly PlannedCall[];
  /** The loop's verdict on a final answer of a run with a responseFormat (structured-output.ts). */
  answer?: AnswerCheck;
  /** The session's next free message position (the driving process numbers its run's messages). */
  nextMessageSeq: number;
  approvalTimeoutMs: number;
  now?: Date;
  newId?: () => string;
}

/**
 * The record of one step, decided from the model's turn and its planned calls alone (no I/O): the
 * outcome, the events, the messages at their positions, the calls' rows and the run's changes.
 */
export function buildStepRecord(input: StepInput): StepRecord {
  const { run, turn, calls } = input;
  const now = input.now ?? new Date();
  const newId = input.newId ?? randomUUID;
  const iteration = run.iterations + 1;
  // Only a final answer (no calls) is judged against the run's responseFormat.
  const answer = calls.length === 0 ? input.answer : undefined;
  const outcome: StepOutcome =
    answer?.kind === 'correct'
      ? 'continue'
      : answer?.kind === 'invalid'
        ? 'invalid_output'
        : stepOutcome(calls, iteration >= run.maxIterations);
  const usage = withCallUsage(runUsage(run), turn.usage, turn.modelCall.costUsd);
  const assistantId = newId();
  // An answer of nothing (a call cut before its first word, an upstream that said nothing) is not
  // stored: strict providers refuse an assistant message with neither text nor tool calls.
  const empty = turn.text === '' && calls.length === 0;

  const events: RunEventBody[] = [
    ...announceCalls(calls),
    {
      type: 'step_finished',
      iteration,
      finishReason: turn.finishReason,
      usage: { ...turn.usage, costUsd: turn.modelCall.costUsd },
      ...(turn.model !== undefined ? { model: turn.model } : {}),
    },
  ];
  if (outcome === 'completed' || outcome === 'max_iterations') {
    events.push({
      type: 'done',
      sessionId: run.sessionId,
      status: outcome,
      iterations: iteration,
      usage,
      messageId: empty ? null : assistantId,
      ...(answer?.kind === 'valid' ? { output: answer.output } : {}),
    });
  }
  const failure: RunError | null =
    answer?.kind === 'invalid'
      ? { code: 'INVALID_OUTPUT', message: invalidOutputMessage(answer.problem), retryable: false }
      : null;
  if (failure) events.push({ type: 'error', ...failure });

  // Positions for the answer and one per call, so results land in the order the model asked
  // whenever they finish.
  const seq = input.nextMessageSeq;
  const toolCalls: StoredToolCall[] = calls.map((c, i) => {
    const extraContent = turn.toolCalls[i]?.extraContent;
    return {
      id: c.callId,
      name: c.name,
      arguments: c.rawArguments,
      ...(extraContent ? { extraContent } : {}),
    };
  });
  const assistant: MessageRow = {
    id: assistantId,
    seq,
    role: 'assistant',
    // A valid structured answer is stored as its JSON text.
    content: turn.text === '' && calls.length > 0 ? null : answer?.kind === 'valid' ? answer.text : turn.text,
    toolCalls: calls.length > 0 ? toolCalls : null,
    toolCallId: null,
    runId: run.id,
    createdAt: now,
    reasoning: turn.reasoning ? turn.reasoning : null,
    providerData: turn.providerData ?? null,
  };
  const answered = calls
    .filter((c) => c.settlement !== null)
    .map((c) =>
      toolMessage(run.id, { callId: c.callId, messageSeq: seq + c.position + 1 }, c.settlement!.result),
    );
  const stored = empty ? [] : [assistant, ...answered];
  // The answer's position and one per call, then the corrective turn's when there is one.
  let nextMessageSeq = empty ? seq : seq + 1 + calls.length;
  // An answer sent back: what is wrong with it, as the next user message.
  if (answer?.kind === 'correct') {
    stored.push({
      ...assistant,
      id: newId(),
      seq: nextMessageSeq++,
      role: 'user',
      content: correctionPrompt(answer.problem),
      toolCalls: null,
      reasoning: null,
      providerData: null,
    });
  }

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
    status: c.status === 'pending' && outcome === 'continue' ? 'running' : c.status,
    deadlineMs:
      c.status === 'pending_approval' || c.status === 'awaiting_client' ? input.approvalTimeoutMs : null,
    approvalReason: c.approvalReason,
    settlement: c.settlement,
  }));

  return {
    outcome,
    iteration,
    usage,
    events,
    messages: stored,
    assistantId,
    calls: newCalls,
    run: {
      iterations: iteration,
      ...usageColumns(usage),
      ...(answer?.kind === 'correct' ? { outputCorrections: (run.outputCorrections ?? 0) + 1 } : {}),
      ...(outcome === 'continue'
        ? {}
        : outcome === 'requires_action'
          ? { status: outcome, leaseOwner: null }
          : {
              status: outcome === 'invalid_output' ? 'failed' : outcome,
              ...(failure ? { error: failure } : {}),
              finalMessageId: empty ? null : assistantId,
              finished: true,
            }),
    },
    nextMessageSeq,
    modelCall: turn.modelCall,
    replayed: turn.replayed === true,
    runnable: newCalls
      .filter((c) => c.status === 'running')
      .map((c) => ({
        ...c,
        approval: null,
        result: null,
        isError: false,
        errorCode: null,
        deadlineAt: null,
        createdAt: now,
        messageSeq: seq + c.position + 1,
        sessionId: run.sessionId,
      })),
  };
}
