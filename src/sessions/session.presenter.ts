import type { MessageRow } from '../store/conversation-store.service';
import type { SessionRow } from '../store/session-store.service';
import type { MessageResponse, SessionResponse } from './dto/session.response';

/** A session's and a message's JSON shapes in the contract, built from stored rows (internal columns stay inside). */

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
    endUser: s.endUser,
    reasoning: s.reasoning,
    agent: s.agent,
    parentSessionId: s.parentSessionId,
    ...(s.responseFormat ? { responseFormat: s.responseFormat } : {}),
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
  };
}

/** A stored message as a client reads it; `deletedFiles`: the files its parts name that are gone. */
export function messageView(m: MessageRow, deletedFiles: ReadonlySet<string> = new Set()): MessageResponse {
  return {
    id: m.id,
    role: m.role,
    content: m.content,
    ...(m.parts
      ? {
          parts: m.parts.map((p) =>
            p.type === 'text'
              ? p
              : {
                  type: p.type,
                  fileId: p.fileId,
                  name: p.name,
                  mediaType: p.mediaType,
                  ...(deletedFiles.has(p.fileId) ? { deleted: true as const } : {}),
                },
          ),
        }
      : {}),
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
