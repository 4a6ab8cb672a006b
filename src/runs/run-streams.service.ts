import { Injectable, UnauthorizedException } from '@nestjs/common';
import { streamTokenExpiry } from '../auth/stream-tokens';
import type { FastifyReply } from 'fastify';
import { RunEventHub } from '../events/run-event-hub.service';
import { Runs } from './runs.service';
import type { StartRun } from './start-run';
import { EventStreams } from '../sse/event-streams.service';

/** Starting a run and following one, each as an event stream on the reply. */
@Injectable()
export class RunStreams {
  constructor(
    private readonly runs: Runs,
    private readonly hub: RunEventHub,
    private readonly streams: EventStreams,
  ) {}

  /**
   * Starts the run and streams it from its start. A retry whose Idempotency-Key an earlier request
   * claimed streams that request's run instead, after `retriedAfter` (its Last-Event-ID).
   */
  async startAndStream(owner: string, input: StartRun, reply: FastifyReply, retriedAfter = 0): Promise<void> {
    this.streams.assertCapacity();
    const { runId, sessionId, replayed } = await this.runs.start(owner, input);
    const after = replayed ? retriedAfter : 0;
    await this.streams.write(
      reply,
      { 'x-run-id': runId, 'x-session-id': sessionId },
      (signal) => this.hub.follow(runId, after, signal),
      () => this.runs.streamClosed(runId),
    );
  }

  async follow(
    owner: string,
    runId: string,
    after: number,
    reply: FastifyReply,
    access: 'api-key' | 'stream-token' = 'api-key',
  ): Promise<void> {
    this.streams.assertCapacity();
    const run = await this.runs.assertRun(owner, runId);
    const tokenExpiry = streamTokenExpiry(run.finishedAt);
    if (access === 'stream-token' && tokenExpiry !== null && tokenExpiry.getTime() <= Date.now()) {
      throw new UnauthorizedException('The stream token has expired');
    }
    const ended = run.status !== 'queued' && run.status !== 'running' && run.status !== 'requires_action';
    if (ended && after >= run.lastSeq) {
      // The client has everything: 204 tells a browser's EventSource to stop reconnecting.
      await reply.code(204).send();
      return;
    }
    await this.streams.write(
      reply,
      { 'x-run-id': runId, 'x-session-id': run.sessionId },
      (signal) => this.hub.follow(runId, after, signal),
      () => this.runs.streamClosed(runId),
    );
  }
}
