import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { DomainError, ErrorCode } from '../common/domain-error';
import { ModelProviders } from '../llm/model-providers.service';
import type { RunStatus } from '../persistence/entities/run.entity';
import { Runs, runNotFound } from '../runs/runs.service';
import { ForkStore } from '../store/fork-store.service';
import { RecordedRunStore } from '../store/recorded-run-store.service';
import { SessionStore } from '../store/session-store.service';

/** The statuses a run ends in: only an ended run can be replayed. */
const ENDED: readonly RunStatus[] = ['completed', 'max_iterations', 'cancelled', 'budget_exceeded', 'failed'];

/** What a replay asks for: all recorded, or recorded up to `fromStep` and live after it (on `model`). */
export interface ReplayRequest {
  fromStep?: number;
  model?: string;
}

/**
 * Replays of runs ("Fork and replay"): a new run, in a fork of the run's session cut just before the
 * run's prompt, that answers the same prompt — its recorded steps from the original's stored answers
 * and results (RecordedRuns, in the normal loop), the rest live.
 */
@Injectable()
export class Replays {
  constructor(
    private readonly recorded: RecordedRunStore,
    private readonly forks: ForkStore,
    private readonly sessions: SessionStore,
    private readonly runs: Runs,
    private readonly models: ModelProviders,
  ) {}

  async replay(
    owner: string,
    runId: string,
    req: ReplayRequest,
  ): Promise<{ runId: string; sessionId: string }> {
    if (req.model !== undefined && req.fromStep === undefined) {
      throw invalid(
        'model can only be given with fromStep: a recorded step keeps the model that answered it',
      );
    }
    const source = await this.recorded.source(owner, runId);
    if (source === null) throw runNotFound(runId);
    if (!ENDED.includes(source.status)) {
      throw new DomainError(
        ErrorCode.SessionBusy,
        `Run ${runId} is still active; replay it once it has ended`,
        {
          runId,
        },
      );
    }
    if (req.fromStep !== undefined && req.fromStep > source.iterations) {
      throw invalid(`fromStep must be between 1 and the run's steps (${source.iterations})`);
    }
    if (req.model !== undefined) {
      const problem = this.models.problem(req.model);
      if (problem !== undefined)
        throw invalid(`model ${JSON.stringify(req.model)} is not accepted: ${problem}`);
    }
    if (source.prompt === null || source.cutSeq === null) {
      throw invalid(`Run ${runId} has no prompt to replay`);
    }
    const fork = await this.forks.fork(owner, source.sessionId, randomUUID(), source.cutSeq);
    if (fork === null) throw runNotFound(runId);
    try {
      const started = await this.runs.start(owner, {
        prompt: source.prompt,
        sessionId: fork.session.id,
        replay: { of: runId, steps: req.fromStep ?? null, model: req.model ?? source.model },
      });
      return { runId: started.runId, sessionId: started.sessionId };
    } catch (err) {
      // A start refused (the key's limits): the fork made for it goes too.
      await this.sessions.delete(fork.session.id, owner).catch(() => undefined);
      throw err;
    }
  }
}

function invalid(message: string): DomainError {
  return new DomainError(ErrorCode.InvalidRequest, message);
}
