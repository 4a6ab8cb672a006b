import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { FileChange } from '../common/file-change';
import type { StoredMessagePart, StoredToolCall } from '../persistence/entities/message.entity';
import type { RunError, RunStatus } from '../persistence/entities/run.entity';
import type { StoredProviderData } from './message-row';

/** One step of a stored run as its model answered it: the answer and its `step_finished` figures. */
export interface RecordedAnswer {
  text: string;
  reasoning: string | null;
  toolCalls: StoredToolCall[];
  providerData: StoredProviderData | null;
  /** What its `step_finished` event said: the upstream's finish reason, the usage, the model. */
  finishReason: string;
  usage: {
    promptTokens: number;
    completionTokens: number;
    cacheReadTokens?: number;
    cacheWriteTokens?: number;
    reasoningTokens?: number;
    estimated?: boolean;
    costUsd?: number | null;
  };
  model: string | null;
}

/** One call of a stored step, with its result as stored. */
export interface RecordedCall {
  position: number;
  executor: 'server' | 'client';
  status: string;
  /**
   * Answered when its step was planned (refused, invalid…): its result came before its step's
   * `step_finished`, not after — by running it, or from someone later.
   */
  atPlan: boolean;
  result: string | null;
  isError: boolean;
  errorCode: string | null;
  truncated: boolean;
  durationMs: number | null;
  /** The `seq` of its `tool_call_result` event in the original's log: the order the results came in. */
  resultSeq: number | null;
  changes: FileChange[] | null;
  /** Its tool message's parts when its result carried a file (read_file of an image or PDF). */
  parts: StoredMessagePart[] | null;
}

/** A run as a replay starts from it: its state, and the prompt it answered. */
export interface ReplaySource {
  sessionId: string;
  status: RunStatus;
  model: string;
  iterations: number;
  /** The prompt the run answered (its own, or — for a run that answered it again — the one before it). */
  prompt: string | null;
  /** The last listed message before that prompt: where the replay's fork is cut. */
  cutSeq: number | null;
}

/**
 * A stored run read back as a record ("Fork and replay"): each step's answer and its calls' results,
 * and how it ended — what a replay's recorded model and recorded tools answer with.
 */
@Injectable()
export class RecordedRunStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** The owner's run as a replay needs it; null when the owner has no such run. */
  async source(owner: string, runId: string): Promise<ReplaySource | null> {
    const rows: ReplaySource[] = await this.db.query(
      `WITH r AS (SELECT id, session_id, status, model, iterations FROM runs WHERE id = $1 AND owner = $2),
            first AS (SELECT min(m.seq) AS seq FROM messages m, r WHERE m.session_id = r.session_id AND m.run_id = r.id),
            prompt AS (
              SELECT m.seq, m.content FROM messages m, r, first
               WHERE m.session_id = r.session_id AND m.role = 'user' AND m.seq <= first.seq
               ORDER BY m.seq DESC LIMIT 1)
       SELECT r.session_id AS "sessionId", r.status, r.model, r.iterations,
              (SELECT content FROM prompt) AS prompt,
              (SELECT max(m.seq) FROM messages m WHERE m.session_id = r.session_id AND m.seq < (SELECT seq FROM prompt)
                  AND (m.role = 'user' OR NOT EXISTS (
                        SELECT 1 FROM runs o WHERE o.id = m.run_id AND o.superseded_by IS NOT NULL))) AS "cutSeq"
         FROM r`,
      [runId, owner],
    );
    return rows[0] ?? null;
  }

  /**
   * Step `iteration` of run `runId` as its model answered it: the step's assistant message (a run
   * stores one per step, in order; an empty answer, stored as none, only ever ends a run) and its
   * `step_finished` event. Null when the run has no such step.
   */
  async answer(runId: string, iteration: number): Promise<RecordedAnswer | null> {
    const rows: (RecordedAnswer & { found: boolean })[] = await this.db.query(
      `SELECT e.payload->>'finishReason' AS "finishReason", e.payload->'usage' AS usage, e.payload->>'model' AS model,
              coalesce(a.content, '') AS text, a.reasoning, coalesce(a.tool_calls, '[]'::jsonb) AS "toolCalls",
              a.provider_data AS "providerData"
         FROM run_events e
         LEFT JOIN LATERAL (
           SELECT m.content, m.reasoning, m.tool_calls, m.provider_data FROM messages m
            WHERE m.run_id = $1 AND m.role = 'assistant' ORDER BY m.seq OFFSET $2::int - 1 LIMIT 1) a ON true
        WHERE e.run_id = $1 AND e.type = 'step_finished' AND (e.payload->>'iteration')::int = $2::int
        LIMIT 1`,
      [runId, iteration],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      text: row.text,
      reasoning: row.reasoning,
      toolCalls: row.toolCalls,
      providerData: row.providerData,
      finishReason: row.finishReason,
      usage: row.usage,
      model: row.model,
    };
  }

  /** The calls of step `iteration` of run `runId`, in the model's order, with their stored results. */
  calls(runId: string, iteration: number): Promise<RecordedCall[]> {
    return this.db.query(
      `SELECT tc.position, tc.executor, tc.status, tc.result, tc.is_error AS "isError", tc.error_code AS "errorCode",
              tc.truncated, tc.duration_ms AS "durationMs", tc.changes,
              coalesce(r.seq < (SELECT min(e.seq) FROM run_events e WHERE e.run_id = tc.run_id AND e.type = 'step_finished'
                                  AND (e.payload->>'iteration')::int = tc.iteration), false) AS "atPlan",
              r.seq AS "resultSeq",
              (SELECT m.parts FROM messages m
                WHERE m.run_id = tc.run_id AND m.role = 'tool' AND m.tool_call_id = tc.call_id LIMIT 1) AS parts
         FROM tool_calls tc
         LEFT JOIN LATERAL (
           SELECT min(e.seq) AS seq FROM run_events e
            WHERE e.run_id = tc.run_id AND e.type = 'tool_call_result' AND e.payload->>'toolCallId' = tc.call_id) r ON true
        WHERE tc.run_id = $1 AND tc.iteration = $2 ORDER BY tc.position`,
      [runId, iteration],
    );
  }

  /** How run `runId` ended: its status, and its error when it failed. */
  async ending(runId: string): Promise<{ status: RunStatus; error: RunError | null } | null> {
    const rows: { status: RunStatus; error: RunError | null }[] = await this.db.query(
      `SELECT status, error FROM runs WHERE id = $1`,
      [runId],
    );
    return rows[0] ?? null;
  }
}
