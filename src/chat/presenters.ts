import { runUsage } from '../agent/step-record';
import type { MessageRow, ToolCallRow } from '../store/conversation-store.service';
import type { RunRow } from '../store/run-store.service';
import type { SessionRow } from '../store/session-store.service';
import type { UsageGrouping, UsageRow } from '../store/usage-store.service';
import type { UsageEntryResponse } from './dto/usage.response';
import type { RunResponse } from './dto/run.response';
import type { MessageResponse, SessionResponse } from './dto/session.response';

/** The JSON shapes of the contract, built from stored rows (internal columns stay inside). */

export function sessionView(s: SessionRow & { preview?: string | null }): SessionResponse {
  return {
    id: s.id,
    title: s.title,
    ...(s.preview ? { preview: s.preview } : {}),
    systemPrompt: s.systemPrompt,
    model: s.model,
    mode: s.mode,
    tools: s.tools,
    clientTools: s.clientTools,
    maxIterations: s.maxIterations,
    maxTokens: s.maxTokens,
    maxCostUsd: s.maxCostUsd,
    reasoning: s.reasoning,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
  };
}

export function messageView(m: MessageRow): MessageResponse {
  return {
    id: m.id,
    role: m.role,
    content: m.content,
    ...(m.toolCalls
      ? { toolCalls: m.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })) }
      : {}),
    ...(m.toolCallId ? { toolCallId: m.toolCallId } : {}),
    ...(m.reasoning ? { reasoning: m.reasoning } : {}),
    ...(m.runId ? { runId: m.runId } : {}),
    ...(m.kind ? { kind: m.kind } : {}),
    ...(m.summarizes ? { summarizes: m.summarizes } : {}),
    ...(m.context ? { context: m.context } : {}),
    createdAt: m.createdAt,
  };
}

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

const USAGE_GROUP_FIELDS = { day: 'day', model: 'model', session: 'sessionId', key: 'key' } as const;

export function usageView(grouping: UsageGrouping, r: UsageRow): UsageEntryResponse {
  return {
    [USAGE_GROUP_FIELDS[grouping]]: r.group,
    runs: r.runs,
    promptTokens: r.promptTokens,
    completionTokens: r.completionTokens,
    cacheReadTokens: r.cacheReadTokens,
    costUsd: r.costUsd,
  };
}
