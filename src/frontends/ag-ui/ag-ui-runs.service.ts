import { Injectable } from '@nestjs/common';
import { RunAgentInputSchema } from '@ag-ui/core/schemas';
import { EventEncoder } from '@ag-ui/encoder';
import { plainToInstance } from 'class-transformer';
import { validate, type ValidationError } from 'class-validator';
import type { FastifyReply } from 'fastify';
import { SessionOptionsDto } from '../../sessions/dto/session-options.dto';
import { DomainError, ErrorCode } from '../../common/domain-error';
import { Runs } from '../../runs/runs.service';
import { WaitingRunTurns } from '../waiting-run-turns.service';
import { Sessions, type SessionOptions } from '../../sessions/sessions.service';
import { ProjectedRunStream } from '../projected-run-stream.service';
import { EventStreams } from '../../sse/event-streams.service';
import { clientToolsOf, readAgUiTurn, upgradeBinaryParts } from './ag-ui-input';
import { AgUiContinuation } from './ag-ui-continuation.service';
import {
  agUiWaitingFinish,
  newAgUiProjection,
  projectAgUiEvent,
  runStarted,
  type AgUiProjectionState,
} from './ag-ui-projection';

const SESSION_OPTION_KEYS = [
  'title',
  'systemPrompt',
  'model',
  'mode',
  'tools',
  'maxIterations',
  'reasoning',
  'maxTokens',
  'maxCostUsd',
  'responseFormat',
] as const;

/** AG-UI's RunAgentInput as Loopwright runs, answered as AG-UI events. */
@Injectable()
export class AgUiRuns {
  constructor(
    private readonly runs: Runs,
    private readonly turns: WaitingRunTurns,
    private readonly sessions: Sessions,
    private readonly projected: ProjectedRunStream,
    private readonly streams: EventStreams,
    private readonly continuation: AgUiContinuation,
  ) {}

  /**
   * `traceParent`: the request's W3C traceparent, under which a run it starts is traced; `endUser`:
   * the request's X-End-User (the thread id names a session of the key and this end user).
   */
  async run(
    owner: string,
    endUser: string | null,
    body: unknown,
    reply: FastifyReply,
    traceParent?: string,
  ): Promise<void> {
    this.streams.assertCapacity();
    const parsed = RunAgentInputSchema.safeParse(upgradeBinaryParts(body));
    if (!parsed.success) {
      throw new DomainError(
        ErrorCode.InvalidRequest,
        parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '),
      );
    }
    const input = parsed.data;
    const turn = readAgUiTurn(input);
    if (turn.kind === 'none') {
      throw new DomainError(
        ErrorCode.InvalidRequest,
        'messages must end with a user message or tool messages',
      );
    }
    const options = await sessionOptions(input.forwardedProps);
    // Checked as POST /v1/sessions checks clientTools, before the thread's session is opened.
    const { clientTools = [] } = await checkedOptions({ clientTools: clientToolsOf(input) }, 'tools');
    const session = await this.sessions.openChat(owner, input.threadId, options, endUser);
    // The input's tools are the thread's client tools from now on.
    await this.sessions.setClientTools(owner, session, clientTools);
    const ids = { threadId: input.threadId, inputRunId: input.runId, sessionId: session.id };

    if (turn.kind === 'prompt') {
      const { runId } = await this.runs.start(owner, {
        prompt: turn.prompt,
        sessionId: session.id,
        traceParent,
        endUser,
      });
      return this.stream(reply, newAgUiProjection({ ...ids, runId }));
    }
    if (turn.kind === 'results') {
      await this.continuation.assertAnswersWaitingCalls(session.id, input.threadId, turn.results);
      const { runId, lastSeq, decided } = await this.turns.decide(
        owner,
        session.id,
        turn.results.map((r) => ({ kind: 'result' as const, ...r })),
        `Thread ${input.threadId} has no waiting run`,
      );
      return this.stream(
        reply,
        newAgUiProjection({ ...ids, runId }, lastSeq, new Set(decided.map((r) => r.toolCallId))),
      );
    }
    // No new prompt and no tool message: the thread's run on from the client's last stream.
    const { runId, after } = await this.continuation.resumePoint(session.id, input.threadId, input.messages);
    return this.stream(reply, newAgUiProjection({ ...ids, runId }, after));
  }

  private stream(reply: FastifyReply, state: AgUiProjectionState): Promise<void> {
    const encoder = new EventEncoder();
    const projected = this.projected;
    return this.streams.writeFrames(
      reply,
      { 'x-run-id': state.runId, 'x-session-id': state.sessionId },
      async function* (signal) {
        yield encoder.encode(runStarted(state));
        const projector = {
          event: (e: Parameters<typeof projectAgUiEvent>[1]) => projectAgUiEvent(state, e),
          mayWait: () => state.waiting.size > 0,
          ended: () => state.ended,
          waiting: (_usage: unknown, pending: Parameters<typeof agUiWaitingFinish>[1]) =>
            agUiWaitingFinish(state, pending),
        };
        for await (const events of projected.follow(state.runId, projector, signal)) {
          yield events.map((e) => encoder.encode(e)).join('');
        }
      },
      () => this.runs.streamClosed(state.runId),
    );
  }
}

/** SessionOptions a client may forward for a new thread, checked like the other routes' bodies. */
async function sessionOptions(forwarded: unknown): Promise<SessionOptions> {
  if (typeof forwarded !== 'object' || forwarded === null) return {};
  const picked: Record<string, unknown> = {};
  for (const k of SESSION_OPTION_KEYS) {
    const v = (forwarded as Record<string, unknown>)[k];
    if (v !== undefined) picked[k] = v;
  }
  return checkedOptions(picked, 'forwardedProps');
}

/** `options` checked by SessionOptionsDto, the rules of the REST bodies; a failure is a 400 under `where`. */
async function checkedOptions(options: Record<string, unknown>, where: string): Promise<SessionOptions> {
  const dto = plainToInstance(SessionOptionsDto, options, { enableImplicitConversion: false });
  const errors = await validate(dto, { whitelist: true, forbidUnknownValues: false });
  if (errors.length > 0) {
    throw new DomainError(
      ErrorCode.InvalidRequest,
      constraintMessages(errors)
        .map((m) => `${where}.${m}`)
        .join('; '),
    );
  }
  return dto;
}

/** Every failed constraint of a validation, nested ones (a client tool's name) included. */
function constraintMessages(errors: readonly ValidationError[]): string[] {
  return errors.flatMap((e) => [
    ...Object.values(e.constraints ?? {}),
    ...constraintMessages(e.children ?? []),
  ]);
}
