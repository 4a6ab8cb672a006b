import { Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { DomainError, ErrorCode } from '../../common/domain-error';
import type { RunEvent, Usage } from '../../events/run-events';
import { Runs } from '../../runs/runs.service';
import { WaitingRunTurns } from '../waiting-run-turns.service';
import { Sessions, type SessionOptions } from '../../sessions/sessions.service';
import { RunStore } from '../../store/run-store.service';
import { ProjectedRunStream, type Projector } from '../projected-run-stream.service';
import { EventStreams } from '../../sse/event-streams.service';
import { ConversationStore } from '../../store/conversation-store.service';
import { readLastMessage } from './ui-message-input';
import { storedUiMessages, type LoopwrightUiMessage } from './stored-ui-messages';
import {
  newUiProjection,
  projectUiEvent,
  startChunk,
  waitingFinish,
  type LoopwrightChunk,
  type UiProjectionState,
} from './ui-message-projection';

export interface AiSdkChatRequest {
  chatId: string;
  messages: Record<string, unknown>[];
  trigger: 'submit-message' | 'regenerate-message';
  options: SessionOptions;
  /** The request's W3C traceparent: a run it starts is traced under it. */
  traceParent?: string;
  /** The request's end user (X-End-User): the chat id names a session of the key and this end user. */
  endUser: string | null;
}

/** `useChat`'s requests as Loopwright runs, answered as AI SDK UI message streams. */
@Injectable()
export class AiSdkChats {
  constructor(
    private readonly runs: Runs,
    private readonly turns: WaitingRunTurns,
    private readonly sessions: Sessions,
    private readonly store: RunStore,
    private readonly projected: ProjectedRunStream,
    private readonly streams: EventStreams,
    private readonly conversation: ConversationStore,
  ) {}

  async send(owner: string, req: AiSdkChatRequest, reply: FastifyReply): Promise<void> {
    this.streams.assertCapacity();
    if (req.trigger === 'regenerate-message') {
      // The stored last prompt is answered again in a new run; nothing of the client's history is read.
      const session = await this.sessions.openChat(owner, req.chatId, req.options, req.endUser);
      const { runId } = await this.runs.start(owner, {
        regenerate: true,
        sessionId: session.id,
        traceParent: req.traceParent,
        endUser: req.endUser,
      });
      return this.stream(reply, newUiProjection(runId, session.id));
    }
    const last = readLastMessage(req.messages);
    if (last.kind === 'none') {
      throw new DomainError(
        ErrorCode.InvalidRequest,
        'the last message must be a user message with text, or an assistant message with tool approval responses or outputs',
      );
    }
    const session = await this.sessions.openChat(owner, req.chatId, req.options, req.endUser);
    if (last.kind === 'prompt') {
      const { runId } = await this.runs.start(owner, {
        prompt: last.prompt,
        sessionId: session.id,
        traceParent: req.traceParent,
        endUser: req.endUser,
      });
      return this.stream(reply, newUiProjection(runId, session.id));
    }
    // The client's message also carries the parts it had already (server results, earlier decisions).
    const { runId, lastSeq, decided } = await this.turns.decide(
      owner,
      session.id,
      last.decisions,
      `Chat ${req.chatId} has no run waiting for a decision`,
    );
    const ownResults = new Set(decided.filter((d) => d.kind === 'result').map((d) => d.toolCallId));
    return this.stream(reply, newUiProjection(runId, session.id, lastSeq, ownResults));
  }

  /** The chat's running or waiting run from its start; 204 when it has none. */
  async resume(owner: string, endUser: string | null, chatId: string, reply: FastifyReply): Promise<void> {
    const session = await this.sessions.findChat(owner, chatId, endUser);
    const runId = session ? await this.store.activeRunOfSession(this.store.queryable, session.id) : null;
    if (!session || !runId) {
      await reply.status(204).send();
      return;
    }
    return this.stream(reply, newUiProjection(runId, session.id));
  }

  /** The chat's stored conversation as `UIMessage[]` (what `useChat({ messages })` takes); `[]` for an unused chat id. */
  async messages(owner: string, endUser: string | null, chatId: string): Promise<LoopwrightUiMessage[]> {
    const session = await this.sessions.findChat(owner, chatId, endUser);
    if (!session) return [];
    const [messages, calls] = await Promise.all([
      this.conversation.sessionMessages(session.id),
      this.conversation.sessionToolCalls(session.id),
    ]);
    return storedUiMessages(session.id, messages, calls);
  }

  private stream(reply: FastifyReply, state: UiProjectionState): Promise<void> {
    const projector: Projector<LoopwrightChunk> = {
      event: (e: RunEvent) => projectUiEvent(state, e),
      mayWait: () => state.waiting.size > 0,
      ended: () => state.ended,
      waiting: (usage: Usage) => waitingFinish(state, usage),
    };
    const projected = this.projected;
    return this.streams.writeFrames(
      reply,
      {
        'x-vercel-ai-ui-message-stream': 'v1',
        'x-run-id': state.runId,
        'x-session-id': state.sessionId,
      },
      async function* (signal) {
        yield frame(startChunk(state));
        for await (const chunks of projected.follow(state.runId, projector, signal)) {
          yield chunks.map(frame).join('');
        }
        if (!signal.aborted) yield 'data: [DONE]\n\n';
      },
      () => this.runs.streamClosed(state.runId),
    );
  }
}

function frame(chunk: LoopwrightChunk): string {
  return `data: ${JSON.stringify(chunk)}\n\n`;
}
