import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { ReasoningLevel, SessionMode } from '../config/app-config';
import type { ResponseFormat } from '../common/response-format';
import type { RunError, RunStatus } from '../persistence/entities/run.entity';
import type { ClientToolDefinition } from '../persistence/entities/session.entity';
import { returningRows, type Queryable } from './store-sql';

export interface SessionRow {
  id: string;
  owner: string;
  title: string | null;
  systemPrompt: string | null;
  model: string | null;
  mode: SessionMode;
  tools: string[] | null;
  clientTools: ClientToolDefinition[];
  maxIterations: number | null;
  /** The most tokens (prompt + completion) and USD each run of the session may use; null = no limit. */
  maxTokens: number | null;
  maxCostUsd: number | null;
  /** The end user the session belongs to besides its key (X-End-User or `endUser`); null: none. */
  endUser: string | null;
  /** How hard its models are asked to reason; null: LLM_REASONING. */
  reasoning: ReasoningLevel | null;
  /** What every run's final answer must be (Structured output); null: free text. */
  responseFormat: ResponseFormat | null;
  /** Where the session's next message goes (internal). */
  nextMessageSeq: number;
  /** A child session's parent session; null for a client's. */
  parentSessionId: string | null;
  /** The run and its `delegate` call this child session answers. */
  parentRunId: string | null;
  parentCallId: string | null;
  /** A child session's root session (whose workspace it works in) and the root run (the client's). */
  rootSessionId: string | null;
  rootRunId: string | null;
  /** The named agent it started from. */
  agent: string | null;
  /** Levels of delegation below the client's run (0: a client's session). */
  depth: number;
  createdAt: Date;
  updatedAt: Date;
}

/** Where a child session sits in its tree. */
export interface Delegation {
  parentSessionId: string;
  parentRunId: string;
  parentCallId: string;
  rootSessionId: string;
  rootRunId: string;
  depth: number;
}

/** A child session of a run (one per `delegate` call) with the state of its run, if it has one yet. */
export interface ChildOfRun {
  sessionId: string;
  callId: string;
  agent: string | null;
  runId: string | null;
  status: RunStatus | null;
  error: RunError | null;
  /** The child's last answer text (its final answer once it has ended); null when it wrote none. */
  answer: string | null;
  promptTokens: number;
  completionTokens: number;
  costUsd: number | null;
}

export type NewSession = Omit<
  SessionRow,
  | 'createdAt'
  | 'updatedAt'
  | 'nextMessageSeq'
  | 'reasoning'
  | 'responseFormat'
  | 'parentSessionId'
  | 'parentRunId'
  | 'parentCallId'
  | 'rootSessionId'
  | 'rootRunId'
  | 'agent'
  | 'depth'
> & {
  reasoning?: ReasoningLevel | null;
  responseFormat?: ResponseFormat | null;
  /** The frontend protocols' chat or thread id naming the session (unique per owner). */
  chatId?: string | null;
  agent?: string | null;
  /** A child session's place in its tree (Delegations); absent for a client's session. */
  delegation?: Delegation;
};

/** The columns of a session's settings: what a fork copies (its place in a tree it does not). */
export const SESSION_SETTING_COLUMNS =
  'title, system_prompt, model, mode, tools, client_tools, max_iterations, max_tokens, max_cost_usd, reasoning, response_format, end_user, agent';

/** The columns of a new session's options, for `INSERT INTO sessions (…, ${SESSION_OPTION_COLUMNS}, …)`. */
export const SESSION_OPTION_COLUMNS = `${SESSION_SETTING_COLUMNS}, parent_session_id, parent_run_id, parent_call_id, root_session_id, root_run_id, depth`;

/** How many parameters SESSION_OPTION_COLUMNS take: the next placeholder after them is `$first + this`. */
export const SESSION_OPTION_COUNT = 19;

/** The placeholders of SESSION_OPTION_COLUMNS, from `$first` on, with their casts. */
export function sessionOptionPlaceholders(first: number): string {
  const $ = (i: number) => `$${first + i}`;
  return `${$(0)}, ${$(1)}, ${$(2)}, ${$(3)}, ${$(4)}::jsonb, ${$(5)}::jsonb, ${$(6)}::int, ${$(7)}::int, ${$(8)}::float8, ${$(9)}, ${$(10)}::jsonb, ${$(11)}, ${$(12)}, ${$(13)}::uuid, ${$(14)}::uuid, ${$(15)}, ${$(16)}::uuid, ${$(17)}::uuid, ${$(18)}::int`;
}

/** The values of SESSION_OPTION_COLUMNS for `s`, in their order. */
export function sessionOptionValues(s: NewSession): unknown[] {
  return [
    s.title,
    s.systemPrompt,
    s.model,
    s.mode,
    s.tools === null ? null : JSON.stringify(s.tools),
    JSON.stringify(s.clientTools),
    s.maxIterations,
    s.maxTokens,
    s.maxCostUsd,
    s.reasoning ?? null,
    s.responseFormat ? JSON.stringify(s.responseFormat) : null,
    s.endUser,
    s.agent ?? null,
    s.delegation?.parentSessionId ?? null,
    s.delegation?.parentRunId ?? null,
    s.delegation?.parentCallId ?? null,
    s.delegation?.rootSessionId ?? null,
    s.delegation?.rootRunId ?? null,
    s.delegation?.depth ?? 0,
  ];
}

/** A session row's columns, named as SessionRow names them. */
export const SESSION_COLUMNS = `id, owner, title, system_prompt AS "systemPrompt", model, mode, tools, client_tools AS "clientTools",
  max_iterations AS "maxIterations", max_tokens AS "maxTokens", max_cost_usd AS "maxCostUsd", end_user AS "endUser", reasoning,
  response_format AS "responseFormat", next_message_seq AS "nextMessageSeq",
  parent_session_id AS "parentSessionId", parent_run_id AS "parentRunId", parent_call_id AS "parentCallId",
  root_session_id AS "rootSessionId", root_run_id AS "rootRunId", agent, depth, created_at AS "createdAt", updated_at AS "updatedAt"`;

/** How much of its first prompt a listed session carries as its `preview`. */
const PREVIEW_CHARS = 80;

/** Sessions in PostgreSQL. Every read takes the owner: another key's session does not exist. */
@Injectable()
export class SessionStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async insert(tx: Queryable, s: NewSession, systemMessage: string): Promise<SessionRow> {
    const rows: SessionRow[] = await tx.query(
      `WITH s AS (
         INSERT INTO sessions (id, owner, ${SESSION_OPTION_COLUMNS}, next_message_seq, chat_id)
         VALUES ($1, $2, ${sessionOptionPlaceholders(3)}, 2, $${3 + SESSION_OPTION_COUNT + 1})
         RETURNING ${SESSION_COLUMNS}
       ), m AS (
         INSERT INTO messages (id, session_id, seq, role, content)
         SELECT gen_random_uuid(), id, 1, 'system', $${3 + SESSION_OPTION_COUNT} FROM s
       )
       SELECT * FROM s`,
      [s.id, s.owner, ...sessionOptionValues(s), systemMessage, s.chatId ?? null],
    );
    return rows[0];
  }

  async find(id: string, owner: string | null, q: Queryable = this.db.manager): Promise<SessionRow | null> {
    const rows: SessionRow[] = await q.query(
      `SELECT ${SESSION_COLUMNS} FROM sessions WHERE id = $1 ${owner === null ? '' : 'AND owner = $2'}`,
      owner === null ? [id] : [id, owner],
    );
    return rows[0] ?? null;
  }

  /** The owner's session, with its active run if it has one (a start's first question). */
  async findWithActiveRun(
    id: string,
    owner: string,
  ): Promise<{ session: SessionRow; activeRunId: string | null } | null> {
    const rows: (SessionRow & { activeRunId: string | null })[] = await this.db.query(
      `SELECT ${SESSION_COLUMNS},
              (SELECT r.id FROM runs r WHERE r.session_id = s.id AND r.status IN ('running', 'requires_action')) AS "activeRunId"
         FROM sessions s WHERE s.id = $1 AND s.owner = $2`,
      [id, owner],
    );
    const row = rows[0];
    if (!row) return null;
    const { activeRunId, ...session } = row;
    return { session, activeRunId };
  }

  /** The owner's session named by a frontend chat or thread id. */
  async findByChatId(owner: string, chatId: string): Promise<SessionRow | null> {
    const rows: SessionRow[] = await this.db.query(
      `SELECT ${SESSION_COLUMNS} FROM sessions WHERE owner = $1 AND chat_id = $2`,
      [owner, chatId],
    );
    return rows[0] ?? null;
  }

  /** The owner's session with its new title; null when the owner has no such session. */
  async updateTitle(id: string, owner: string, title: string): Promise<SessionRow | null> {
    const rows = returningRows<SessionRow>(
      await this.db.query(
        `UPDATE sessions SET title = $3, updated_at = now() WHERE id = $1 AND owner = $2 RETURNING ${SESSION_COLUMNS}`,
        [id, owner, title],
      ),
    );
    return rows[0] ?? null;
  }

  async updateClientTools(id: string, clientTools: ClientToolDefinition[]): Promise<void> {
    await this.db.query(`UPDATE sessions SET client_tools = $2::jsonb, updated_at = now() WHERE id = $1`, [
      id,
      JSON.stringify(clientTools),
    ]);
  }

  /** Newest first; the cursor is the last row's (created_at, id). */
  /** `children`: child sessions (a delegation's) are listed too. */
  async list(
    owner: string,
    endUser: string | null,
    limit: number,
    cursor: { createdAt: string; id: string } | null,
    children = false,
  ): Promise<(SessionRow & { cursorAt: string; preview: string | null })[]> {
    const params: unknown[] = [owner, limit];
    const where = ['owner = $1'];
    if (endUser !== null) where.push(`end_user = $${params.push(endUser)}`);
    if (!children) where.push('parent_session_id IS NULL');
    if (cursor)
      where.push(
        `(created_at, id) < ($${params.push(cursor.createdAt)}::timestamptz, $${params.push(cursor.id)}::uuid)`,
      );
    // The start of the first prompt names a session without a title in a list (one index probe each).
    return this.db.query(
      `SELECT ${SESSION_COLUMNS}, created_at::text AS "cursorAt",
              (SELECT left(m.content, ${PREVIEW_CHARS}) FROM messages m
                WHERE m.session_id = sessions.id AND m.role = 'user' ORDER BY m.seq LIMIT 1) AS preview
         FROM sessions WHERE ${where.join(' AND ')}
       ORDER BY created_at DESC, id DESC LIMIT $2`,
      params,
    );
  }

  /**
   * The end user of the owner's session `id`, or of the session of its run `runId`: null when it has
   * none, undefined when the owner has no such session or run.
   */
  async endUserOf(
    of: { sessionId: string } | { runId: string },
    owner: string,
  ): Promise<string | null | undefined> {
    const rows: { endUser: string | null }[] =
      'sessionId' in of
        ? await this.db.query(`SELECT end_user AS "endUser" FROM sessions WHERE id = $1 AND owner = $2`, [
            of.sessionId,
            owner,
          ])
        : await this.db.query(
            `SELECT s.end_user AS "endUser" FROM runs r JOIN sessions s ON s.id = r.session_id
              WHERE r.id = $1 AND r.owner = $2`,
            [of.runId, owner],
          );
    return rows.length === 0 ? undefined : rows[0].endUser;
  }

  /**
   * Deletes the session with everything it holds, unless it has an active run: that run would go on
   * writing into a session that no longer exists. Answers what happened.
   */
  async delete(id: string, owner: string): Promise<{ deleted: boolean; activeRunId: string | null }> {
    const rows = returningRows<{ id: string }>(
      await this.db.query(
        `WITH RECURSIVE gone AS (
           DELETE FROM sessions s WHERE s.id = $1 AND s.owner = $2
              AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.session_id = s.id AND r.status IN ('running', 'requires_action'))
            RETURNING s.id
         ), tree(id) AS (
           -- Its child sessions (a delegation's) go with it (their foreign key cascades), and theirs.
           SELECT id FROM gone
           UNION ALL
           SELECT c.id FROM sessions c JOIN tree t ON c.parent_session_id = t.id
         ), events AS (
           -- The event log has no foreign key (see RunEventEntity): its rows go here, with their runs.
           DELETE FROM run_events e USING runs r WHERE r.session_id IN (SELECT id FROM tree) AND e.run_id = r.id
         )
         SELECT id FROM gone`,
        [id, owner],
      ),
    );
    if (rows.length > 0) return { deleted: true, activeRunId: null };
    const active: { id: string }[] = await this.db.query(
      `SELECT r.id FROM runs r JOIN sessions s ON s.id = r.session_id
        WHERE s.id = $1 AND s.owner = $2 AND r.status IN ('running', 'requires_action')`,
      [id, owner],
    );
    return { deleted: false, activeRunId: active[0]?.id ?? null };
  }

  /** The child sessions of `parentRunId`, each with its run's state and last answer. */
  async childrenOfRun(q: Queryable, parentRunId: string): Promise<ChildOfRun[]> {
    const rows: ChildOfRun[] = await q.query(
      `SELECT s.id AS "sessionId", s.parent_call_id AS "callId", s.agent, r.id AS "runId", r.status, r.error,
              (SELECT m.content FROM messages m
                WHERE m.session_id = s.id AND m.role = 'assistant' AND m.content IS NOT NULL AND m.content <> ''
                ORDER BY m.seq DESC LIMIT 1) AS answer,
              coalesce(r.prompt_tokens, 0) AS "promptTokens", coalesce(r.completion_tokens, 0) AS "completionTokens",
              r.cost_usd AS "costUsd"
         FROM sessions s LEFT JOIN runs r ON r.session_id = s.id
        WHERE s.parent_run_id = $1
        ORDER BY s.created_at`,
      [parentRunId],
    );
    return rows.map((r) => ({
      ...r,
      promptTokens: Number(r.promptTokens),
      completionTokens: Number(r.completionTokens),
    }));
  }
}
