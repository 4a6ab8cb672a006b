import type { Usage } from '../llm/model-provider';
import type { EventRecord } from '../store/run-store.service';

export type { Usage };

/** Usage as events and runs report it: with its cost in USD, null when no model call had a price. */
export type PricedUsage = Usage & { costUsd: number | null };

/**
 * The event stream's vocabulary (docs/API.md, "The event stream"). Every event a run emits is
 * one of these; `seq` is assigned by the run's event sink, 1, 2, 3 … within the run.
 */

export type ToolExecutor = 'server' | 'client';

export type RunEventBody =
  /** The run waits for its session's active run; `position` 1 is next ("Messages while a run is active"). */
  | { type: 'queued'; position: number }
  | { type: 'run_started'; sessionId: string; model: string }
  | { type: 'text'; delta: string }
  | { type: 'reasoning'; delta: string }
  | {
      type: 'tool_call_start';
      toolCallId: string;
      name: string;
      arguments: unknown;
      executor: ToolExecutor;
    }
  | { type: 'tool_approval_required'; toolCallId: string; name: string; arguments: unknown; reason: string }
  | { type: 'tool_call_output'; toolCallId: string; stream: 'stdout' | 'stderr'; chunk: string }
  | {
      type: 'tool_call_result';
      toolCallId: string;
      name: string;
      content: string;
      isError: boolean;
      durationMs: number;
      errorCode?: string;
      truncated?: boolean;
    }
  | {
      type: 'step_finished';
      iteration: number;
      finishReason: string;
      usage: PricedUsage;
      /** The `provider/model` that answered (a fallback's, when one did). */
      model?: string;
    }
  | {
      /** Older context was pruned or summarized before the model call that follows ("Long sessions"). */
      type: 'context_compacted';
      summarizedMessages: number;
      prunedMessages: number;
      tokensBefore: number;
      tokensAfter: number;
    }
  | {
      type: 'done';
      sessionId: string;
      status: 'completed' | 'max_iterations' | 'cancelled' | 'budget_exceeded';
      iterations: number;
      usage: PricedUsage;
      messageId: string | null;
      /** The final answer's parsed value, with a responseFormat (Structured output). */
      output?: unknown;
    }
  | { type: 'error'; code: string; message: string; retryable: boolean }
  /** A process took the run over after its own one died or shut down; `iteration`: the next step's. */
  | { type: 'run_resumed'; reason: 'process_lost' | 'shutdown'; iteration: number }
  /** A `delegate` call's child run started; the child's events follow ("Agents and delegation"). */
  | {
      type: 'subagent_started';
      toolCallId: string;
      agent: string;
      childRunId: string;
      childSessionId: string;
    }
  /** A `delegate` call's child run ended (`status` its run status); its tool result follows. */
  | {
      type: 'subagent_finished';
      toolCallId: string;
      agent: string;
      childRunId: string;
      childSessionId: string;
      status: string;
      usage: PricedUsage;
    };

export type RunEventType = RunEventBody['type'];

export type RunEvent = RunEventBody & { runId: string; seq: number };

/** An event as it is stored and sent: its number, its type and its JSON text (serialised once). */
export interface SerializedEvent extends EventRecord {
  type: RunEventType;
}

export function isTerminalEvent(type: string): boolean {
  return type === 'done' || type === 'error';
}

export function serializeEvent(runId: string, seq: number, body: RunEventBody): SerializedEvent {
  return { seq, type: body.type, data: JSON.stringify({ ...body, runId, seq }) };
}

export function serializeEvents(
  runId: string,
  lastSeq: number,
  bodies: readonly RunEventBody[],
): SerializedEvent[] {
  return bodies.map((body, i) => serializeEvent(runId, lastSeq + i + 1, body));
}
