import { runUsage } from '../agent/step-record';
import type { ToolCallRow } from '../store/conversation-store.service';
import type { RunRow } from '../store/run-store.service';
import type { RunResponse } from './dto/run.response';

/** A run's JSON shape in the contract, built from its stored row (internal columns stay inside). */
export function runView(r: RunRow & { pendingToolCalls: ToolCallRow[] }): RunResponse {
  return {
    id: r.id,
    sessionId: r.sessionId,
    status: r.status,
    model: r.model,
    iterations: r.iterations,
    maxIterations: r.maxIterations,
    usage: runUsage(r),
    pendingToolCalls: r.pendingToolCalls.map((c) => ({
      toolCallId: c.callId,
      runId: c.runId,
      name: c.name,
      arguments: c.arguments ?? c.rawArguments,
      executor: c.executor,
      waitingFor: c.status === 'pending_approval' ? 'approval' : 'result',
      reason: c.approvalReason,
      expiresAt: c.deadlineAt,
    })),
    error: r.error,
    createdAt: r.createdAt,
    finishedAt: r.finishedAt,
  };
}
