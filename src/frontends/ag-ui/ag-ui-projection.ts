import { EventType, type BaseEvent } from '@ag-ui/core';
import type { RunEvent } from '../../events/run-events';
import type { PendingCall } from '../projected-run-stream.service';

/** What RUN_FINISHED.result carries. */
export interface AgUiRunResult {
  runId: string;
  sessionId: string;
  status: string;
  pendingToolCalls: PendingCall[];
}

export interface AgUiProjectionState {
  threadId: string;
  /** The input's runId (the client's), echoed by RUN_STARTED and RUN_FINISHED. */
  inputRunId: string;
  /** Loopwright's run. */
  runId: string;
  sessionId: string;
  emitAfter: number;
  /** Calls the client answered with its own tool messages: it has their results. */
  skipResults: ReadonlySet<string>;
  stepOpen: boolean;
  iteration: number;
  textId: string | null;
  /** The open reasoning message, if any. */
  reasoningId?: string | null;
  waiting: Set<string>;
  ended: boolean;
  /** Client calls of runs below this one, surfaced as this thread's tool calls. */
  surfaced?: Set<string>;
}

export function newAgUiProjection(
  ids: { threadId: string; inputRunId: string; runId: string; sessionId: string },
  emitAfter = 0,
  skipResults: ReadonlySet<string> = new Set(),
): AgUiProjectionState {
  return {
    ...ids,
    emitAfter,
    skipResults,
    stepOpen: false,
    iteration: 0,
    textId: null,
    waiting: new Set(),
    ended: false,
  };
}

export function runStarted(s: AgUiProjectionState): BaseEvent {
  return { type: EventType.RUN_STARTED, threadId: s.threadId, runId: s.inputRunId };
}

/** The AG-UI events of one Loopwright event (none for those the client already has). */
export function projectAgUiEvent(s: AgUiProjectionState, e: RunEvent): BaseEvent[] {
  const out: BaseEvent[] = [];
  // A child run's events (copied into this run's log) are its own; its start and end are CUSTOM events.
  if (e.runId !== s.runId) {
    projectChildEvent(s, e, out);
    return e.seq > s.emitAfter ? out : [];
  }
  switch (e.type) {
    case 'subagent_started':
    case 'subagent_finished': {
      const { type, runId: _runId, seq: _seq, ...value } = e;
      out.push(ev(EventType.CUSTOM, { name: type, value }));
      break;
    }
    // context_compacted: older context made room for the next call; the client's messages are unchanged.
    case 'queued':
    case 'run_started':
    case 'tool_call_output':
    case 'context_compacted':
      break;
    case 'reasoning':
      openStep(s, out);
      endText(s, out);
      if (!s.reasoningId) {
        s.reasoningId = `${s.runId}-reasoning-${e.seq}`;
        out.push(
          ev(EventType.REASONING_START, { messageId: s.reasoningId }),
          ev(EventType.REASONING_MESSAGE_START, { messageId: s.reasoningId, role: 'reasoning' }),
        );
      }
      out.push(ev(EventType.REASONING_MESSAGE_CONTENT, { messageId: s.reasoningId, delta: e.delta }));
      break;
    case 'text':
      openStep(s, out);
      closeReasoning(s, out);
      if (s.textId === null) {
        s.textId = `${s.runId}-${e.seq}`;
        out.push(ev(EventType.TEXT_MESSAGE_START, { messageId: s.textId, role: 'assistant' }));
      }
      out.push(ev(EventType.TEXT_MESSAGE_CONTENT, { messageId: s.textId, delta: e.delta }));
      break;
    case 'tool_call_start':
      openStep(s, out);
      closeText(s, out);
      if (e.executor === 'client') s.waiting.add(e.toolCallId);
      out.push(...toolCallEvents(e));
      break;
    case 'tool_approval_required':
      s.waiting.add(e.toolCallId);
      break;
    case 'tool_call_result':
      s.waiting.delete(e.toolCallId);
      if (s.skipResults.has(e.toolCallId)) break;
      out.push(toolResultEvent(e));
      break;
    case 'step_finished':
      closeStep(s, out);
      s.iteration = e.iteration;
      break;
    case 'run_resumed':
      // A take-over: the interrupted step was finished above; the next model call is a new step.
      closeStep(s, out);
      s.iteration = e.iteration - 1;
      openStep(s, out);
      break;
    case 'done':
      closeStep(s, out);
      s.ended = true;
      // A structured answer's value (responseFormat), as the run's state before it finishes.
      if (e.output !== undefined) out.push(ev(EventType.STATE_SNAPSHOT, { snapshot: { output: e.output } }));
      out.push(finished(s, e.status, []));
      break;
    case 'error':
      closeStep(s, out);
      s.ended = true;
      out.push(ev(EventType.RUN_ERROR, { message: e.message, code: e.code }));
      break;
  }
  return e.seq > s.emitAfter ? out : [];
}

/**
 * An event of a run below this one: only what this thread must act on. A call below that waits for
 * approval keeps the stream waiting (RUN_FINISHED lists it); a client tool's call below (the root
 * session's tools, given to the child) is a tool call of this thread, answered by its tool message.
 */
function projectChildEvent(s: AgUiProjectionState, e: RunEvent, out: BaseEvent[]): void {
  const surfaced = (s.surfaced ??= new Set());
  switch (e.type) {
    case 'tool_approval_required':
      s.waiting.add(e.toolCallId);
      return;
    case 'tool_call_start':
      // Outside this run's steps: the parent's step that delegated has ended.
      if (e.executor !== 'client') return;
      closeText(s, out);
      surfaced.add(e.toolCallId);
      s.waiting.add(e.toolCallId);
      out.push(...toolCallEvents(e));
      return;
    case 'tool_call_result':
      s.waiting.delete(e.toolCallId);
      if (!surfaced.delete(e.toolCallId) || s.skipResults.has(e.toolCallId)) return;
      out.push(toolResultEvent(e));
      return;
    // The rest of a child's work is its own: its start and end are the delegating run's CUSTOM events.
    case 'queued':
    case 'run_started':
    case 'reasoning':
    case 'text':
    case 'tool_call_output':
    case 'step_finished':
    case 'context_compacted':
    case 'done':
    case 'error':
    case 'run_resumed':
    case 'subagent_started':
    case 'subagent_finished':
      return;
  }
}

/** A waiting run ends its stream with a plain RUN_FINISHED listing the calls it waits for. */
export function agUiWaitingFinish(s: AgUiProjectionState, pending: PendingCall[]): BaseEvent[] {
  const out: BaseEvent[] = [];
  closeStep(s, out);
  s.ended = true;
  out.push(finished(s, 'requires_action', pending));
  return out;
}

function finished(s: AgUiProjectionState, status: string, pending: PendingCall[]): BaseEvent {
  const result: AgUiRunResult = { runId: s.runId, sessionId: s.sessionId, status, pendingToolCalls: pending };
  return ev(EventType.RUN_FINISHED, { threadId: s.threadId, runId: s.inputRunId, result });
}

/** A tool call as AG-UI streams it: its start, its arguments whole, its end. */
function toolCallEvents(e: Extract<RunEvent, { type: 'tool_call_start' }>): BaseEvent[] {
  return [
    ev(EventType.TOOL_CALL_START, { toolCallId: e.toolCallId, toolCallName: e.name }),
    ev(EventType.TOOL_CALL_ARGS, { toolCallId: e.toolCallId, delta: JSON.stringify(e.arguments ?? {}) }),
    ev(EventType.TOOL_CALL_END, { toolCallId: e.toolCallId }),
  ];
}

function toolResultEvent(e: Extract<RunEvent, { type: 'tool_call_result' }>): BaseEvent {
  return ev(EventType.TOOL_CALL_RESULT, {
    messageId: `${e.toolCallId}-result`,
    toolCallId: e.toolCallId,
    content: e.content,
    role: 'tool',
  });
}

function ev(type: EventType, fields: Record<string, unknown>): BaseEvent {
  return { type, ...fields };
}

function openStep(s: AgUiProjectionState, out: BaseEvent[]): void {
  if (s.stepOpen) return;
  s.stepOpen = true;
  out.push(ev(EventType.STEP_STARTED, { stepName: `model-call-${s.iteration + 1}` }));
}

function closeReasoning(s: AgUiProjectionState, out: BaseEvent[]): void {
  if (!s.reasoningId) return;
  out.push(
    ev(EventType.REASONING_MESSAGE_END, { messageId: s.reasoningId }),
    ev(EventType.REASONING_END, { messageId: s.reasoningId }),
  );
  s.reasoningId = null;
}

/** Closes the open text message (and reasoning: a step's messages end before the next begins). */
function closeText(s: AgUiProjectionState, out: BaseEvent[]): void {
  closeReasoning(s, out);
  endText(s, out);
}

function endText(s: AgUiProjectionState, out: BaseEvent[]): void {
  if (s.textId === null) return;
  out.push(ev(EventType.TEXT_MESSAGE_END, { messageId: s.textId }));
  s.textId = null;
}

function closeStep(s: AgUiProjectionState, out: BaseEvent[]): void {
  closeText(s, out);
  if (s.stepOpen) out.push(ev(EventType.STEP_FINISHED, { stepName: `model-call-${s.iteration + 1}` }));
  s.stepOpen = false;
}
