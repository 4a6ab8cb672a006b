import type { FinishReason, UIMessageChunk } from 'ai' with { 'resolution-mode': 'import' };
import type { RunEvent, ToolExecutor, Usage } from '../../events/run-events';

/** What `start` and `finish` carry as `messageMetadata`. */
export interface LoopwrightMessageMetadata {
  runId: string;
  sessionId: string;
  status?: string;
  usage?: Usage;
}

export type LoopwrightChunk = UIMessageChunk<LoopwrightMessageMetadata>;

/** What the projection remembers between events of one stream. */
export interface UiProjectionState {
  runId: string;
  sessionId: string;
  /** Events up to this seq only update the state: the client already has their chunks. */
  emitAfter: number;
  /** Calls whose results the client gave itself: it has them already. */
  skipResults: ReadonlySet<string>;
  lastSeq: number;
  stepOpen: boolean;
  textId: string | null;
  /** The open reasoning part, if any. */
  reasoningId?: string | null;
  executors: Map<string, ToolExecutor>;
  /** Calls that wait for a person or the client (as far as the events tell). */
  waiting: Set<string>;
  lastStepFinishReason: string;
  ended: boolean;
  /** The run's `delegate` calls' child runs, by child run id: their `data-subagent` parts. */
  subagents?: Map<string, SubagentData>;
  /** Calls of runs below this one surfaced as approvals of this message. */
  surfaced?: Set<string>;
}

/** A `data-subagent` part's data ("Agents and delegation"), updated in place by its id. */
export interface SubagentData {
  toolCallId: string;
  agent: string;
  childRunId: string;
  status: string;
  text: string;
}

export function newUiProjection(
  runId: string,
  sessionId: string,
  emitAfter = 0,
  skipResults: ReadonlySet<string> = new Set(),
): UiProjectionState {
  return {
    runId,
    sessionId,
    emitAfter,
    skipResults,
    lastSeq: 0,
    stepOpen: false,
    textId: null,
    executors: new Map(),
    waiting: new Set(),
    lastStepFinishReason: 'stop',
    ended: false,
  };
}

/**
 * The `start` chunk of every stream of a run. Its messageId is the run id: every stream of one run
 * (the first, a continuation after an approval, a replay after a reload) extends one assistant message.
 */
export function startChunk(s: UiProjectionState): LoopwrightChunk {
  return { type: 'start', messageId: s.runId, messageMetadata: { runId: s.runId, sessionId: s.sessionId } };
}

/** The chunks of one Loopwright event (none for events the client already has). */
export function projectUiEvent(s: UiProjectionState, e: RunEvent): LoopwrightChunk[] {
  const out: LoopwrightChunk[] = [];
  s.lastSeq = e.seq;
  if (e.runId !== s.runId) {
    projectChildEvent(s, e, out);
    return e.seq > s.emitAfter ? out : [];
  }
  switch (e.type) {
    // context_compacted: older context made room for the next call; the client's messages are unchanged.
    case 'subagent_started':
    case 'subagent_finished': {
      const subagents = (s.subagents ??= new Map<string, SubagentData>());
      const known = subagents.get(e.childRunId);
      const data: SubagentData = {
        toolCallId: e.toolCallId,
        agent: e.agent,
        childRunId: e.childRunId,
        status: e.type === 'subagent_started' ? 'running' : e.status,
        text: known?.text ?? '',
      };
      subagents.set(e.childRunId, data);
      out.push(subagentChunk(data));
      break;
    }
    case 'queued':
    case 'run_started':
    case 'tool_call_output':
    case 'context_compacted':
      break;
    case 'reasoning':
      openStep(s, out);
      endText(s, out);
      if (!s.reasoningId) {
        s.reasoningId = `reasoning-${e.seq}`;
        out.push({ type: 'reasoning-start', id: s.reasoningId });
      }
      out.push({ type: 'reasoning-delta', id: s.reasoningId, delta: e.delta });
      break;
    case 'text':
      openStep(s, out);
      closeReasoning(s, out);
      if (s.textId === null) {
        s.textId = `text-${e.seq}`;
        out.push({ type: 'text-start', id: s.textId });
      }
      out.push({ type: 'text-delta', id: s.textId, delta: e.delta });
      break;
    case 'tool_call_start':
      openStep(s, out);
      closeText(s, out);
      s.executors.set(e.toolCallId, e.executor);
      if (e.executor === 'client') s.waiting.add(e.toolCallId);
      out.push({
        type: 'tool-input-available',
        toolCallId: e.toolCallId,
        toolName: e.name,
        input: e.arguments,
        ...(e.executor === 'server' ? { dynamic: true } : {}),
      });
      break;
    case 'tool_approval_required':
      s.waiting.add(e.toolCallId);
      out.push({ type: 'tool-approval-request', approvalId: e.toolCallId, toolCallId: e.toolCallId });
      break;
    case 'tool_call_result': {
      s.waiting.delete(e.toolCallId);
      if (s.skipResults.has(e.toolCallId)) break;
      const dynamic = s.executors.get(e.toolCallId) === 'server' ? { dynamic: true } : {};
      if (e.errorCode === 'REJECTED') out.push({ type: 'tool-output-denied', toolCallId: e.toolCallId });
      else if (e.isError)
        out.push({ type: 'tool-output-error', toolCallId: e.toolCallId, errorText: e.content, ...dynamic });
      else
        out.push({ type: 'tool-output-available', toolCallId: e.toolCallId, output: e.content, ...dynamic });
      break;
    }
    case 'step_finished':
      closeText(s, out);
      if (s.stepOpen) out.push({ type: 'finish-step' });
      s.stepOpen = false;
      s.lastStepFinishReason = e.finishReason;
      break;
    case 'run_resumed':
      // A take-over: the interrupted step was finished above; the next model call is a new step.
      closeStep(s, out);
      openStep(s, out);
      break;
    case 'done':
      closeStep(s, out);
      s.ended = true;
      // A structured answer's value (responseFormat), before the finish.
      if (e.output !== undefined) out.push({ type: 'data-output', data: { output: e.output } });
      out.push({
        type: 'finish',
        finishReason:
          e.status === 'completed'
            ? sdkFinishReason(s.lastStepFinishReason)
            : e.status === 'cancelled'
              ? 'interrupted'
              : 'other',
        messageMetadata: { runId: s.runId, sessionId: s.sessionId, status: e.status, usage: e.usage },
      });
      break;
    case 'error':
      closeStep(s, out);
      s.ended = true;
      out.push({ type: 'error', errorText: e.message });
      break;
  }
  return e.seq > s.emitAfter ? out : [];
}

/**
 * An event of a run below this one (copied into this run's log): a direct child's text updates its
 * `data-subagent` part, never this message's answer; a call below that waits for approval is an
 * ordinary approval request of this message (its input, then the request; then its outcome), and a
 * client tool's call below an ordinary client call of this message.
 */
function projectChildEvent(s: UiProjectionState, e: RunEvent, out: LoopwrightChunk[]): void {
  const surfaced = (s.surfaced ??= new Set());
  switch (e.type) {
    case 'text': {
      const data = s.subagents?.get(e.runId);
      if (!data) return;
      data.text += e.delta;
      out.push(subagentChunk(data));
      return;
    }
    case 'tool_approval_required':
      openStep(s, out);
      closeText(s, out);
      surfaced.add(e.toolCallId);
      s.waiting.add(e.toolCallId);
      out.push(
        {
          type: 'tool-input-available',
          toolCallId: e.toolCallId,
          toolName: e.name,
          input: e.arguments,
          dynamic: true,
        },
        { type: 'tool-approval-request', approvalId: e.toolCallId, toolCallId: e.toolCallId },
      );
      return;
    case 'tool_call_start':
      // A client tool of a run below (the root session's, given to the child): the client runs it
      // as a call of this message, and its output, sent back as usual, answers the child's call.
      if (e.executor !== 'client') return;
      openStep(s, out);
      closeText(s, out);
      surfaced.add(e.toolCallId);
      s.waiting.add(e.toolCallId);
      out.push({
        type: 'tool-input-available',
        toolCallId: e.toolCallId,
        toolName: e.name,
        input: e.arguments,
      });
      return;
    case 'tool_call_result':
      if (!surfaced.delete(e.toolCallId)) return;
      s.waiting.delete(e.toolCallId);
      if (s.skipResults.has(e.toolCallId)) return;
      if (e.errorCode === 'REJECTED') out.push({ type: 'tool-output-denied', toolCallId: e.toolCallId });
      else if (e.isError)
        out.push({
          type: 'tool-output-error',
          toolCallId: e.toolCallId,
          errorText: e.content,
          dynamic: true,
        });
      else
        out.push({
          type: 'tool-output-available',
          toolCallId: e.toolCallId,
          output: e.content,
          dynamic: true,
        });
      return;
    // The rest of a child's work shows in its part's status and text, or nowhere in this message.
    case 'queued':
    case 'run_started':
    case 'reasoning':
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

function subagentChunk(data: SubagentData): LoopwrightChunk {
  return { type: 'data-subagent', id: `subagent-${data.toolCallId}`, data: { ...data } };
}

/** How a stream ends when its run starts waiting for an approval or a client result. */
export function waitingFinish(s: UiProjectionState, usage: Usage): LoopwrightChunk[] {
  const out: LoopwrightChunk[] = [];
  closeStep(s, out);
  s.ended = true;
  out.push({
    type: 'finish',
    finishReason: 'tool-calls',
    messageMetadata: { runId: s.runId, sessionId: s.sessionId, status: 'requires_action', usage },
  });
  return out;
}

/** The upstream's finish_reason as one of the SDK's values. */
export function sdkFinishReason(upstream: string): FinishReason {
  switch (upstream) {
    case 'stop':
      return 'stop';
    case 'length':
      return 'length';
    case 'content_filter':
      return 'content-filter';
    case 'tool_calls':
    case 'function_call':
      return 'tool-calls';
    case 'interrupted':
      return 'interrupted';
    default:
      return 'other';
  }
}

function openStep(s: UiProjectionState, out: LoopwrightChunk[]): void {
  if (s.stepOpen) return;
  s.stepOpen = true;
  out.push({ type: 'start-step' });
}

function closeReasoning(s: UiProjectionState, out: LoopwrightChunk[]): void {
  if (!s.reasoningId) return;
  out.push({ type: 'reasoning-end', id: s.reasoningId });
  s.reasoningId = null;
}

/** Closes the open text part (and the reasoning part: a step's parts end before the next begins). */
function closeText(s: UiProjectionState, out: LoopwrightChunk[]): void {
  closeReasoning(s, out);
  endText(s, out);
}

function endText(s: UiProjectionState, out: LoopwrightChunk[]): void {
  if (s.textId === null) return;
  out.push({ type: 'text-end', id: s.textId });
  s.textId = null;
}

function closeStep(s: UiProjectionState, out: LoopwrightChunk[]): void {
  closeText(s, out);
  if (s.stepOpen) out.push({ type: 'finish-step' });
  s.stepOpen = false;
}
