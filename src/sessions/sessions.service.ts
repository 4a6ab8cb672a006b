import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { APP_CONFIG } from '../config/config.module';
import type { AgentConfig } from '../config/agents-config';
import type { AppConfig, ReasoningLevel, SessionMode } from '../config/app-config';
import { sessionEndUser } from '../auth/end-user';
import { DomainError, ErrorCode } from '../common/domain-error';
import type { ResponseFormat } from '../common/response-format';
import { decodeCursor, encodeCursor } from '../common/page-cursor';
import { ModelProviders } from '../llm/model-providers.service';
import type { ClientToolDefinition } from '../persistence/entities/session.entity';
import { validateJsonSchema } from '../tools/json-schema';
import { ToolRegistry } from '../tools/tool-registry.service';
import { BackgroundCommands } from '../tools/exec/background-commands.service';
import { Workspaces } from '../tools/workspaces';
import {
  ConversationStore,
  type FileChangeRecord,
  type MessageRow,
} from '../store/conversation-store.service';
import { RunStore, type Queryable } from '../store/run-store.service';
import { FileStore } from '../store/file-store.service';
import {
  SessionStore,
  type Delegation,
  type NewSession,
  type SessionRow,
} from '../store/session-store.service';
import { checkResponseFormat } from './response-format';
import { defaultSystemPrompt } from './system-prompt';
import { Toolset } from '../tools/toolset';

export interface SessionOptions {
  title?: string;
  systemPrompt?: string;
  model?: string;
  mode?: SessionMode;
  tools?: string[];
  clientTools?: ClientToolDefinition[];
  maxIterations?: number;
  maxTokens?: number;
  maxCostUsd?: number;
  reasoning?: ReasoningLevel;
  /** A named agent of AGENTS_CONFIG: the session starts from its settings; these options override them. */
  agent?: string;
  /** Checked by checkResponseFormat (a 400 naming responseFormat). */
  responseFormat?: ResponseFormat;
  /** The end user the session belongs to besides its key (checked against X-End-User: auth/end-user.ts). */
  endUser?: string;
}

export interface SessionPage {
  data: SessionRow[];
  nextCursor: string | null;
}

/** Sessions: their options checked against this server, created, listed, read and deleted per owner. */
@Injectable()
export class Sessions {
  constructor(
    private readonly sessions: SessionStore,
    private readonly runs: RunStore,
    private readonly conversation: ConversationStore,
    private readonly registry: ToolRegistry,
    private readonly workspaces: Workspaces,
    private readonly background: BackgroundCommands,
    private readonly modelProviders: ModelProviders,
    private readonly files: FileStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(
    owner: string,
    options: SessionOptions,
    tx: Queryable = this.runs.queryable,
  ): Promise<SessionRow> {
    const { session, systemMessage } = this.draft(owner, options);
    return this.sessions.insert(tx, session, systemMessage);
  }

  /**
   * A new session of `owner`, not stored yet: its options checked (a bad one is a 400 naming the
   * field), with the tools it offers and the text of its system message.
   */
  draft(
    owner: string,
    options: SessionOptions,
    delegation?: Delegation,
  ): { session: NewSession; toolset: Toolset; systemMessage: string } {
    const session = { ...this.prepare(owner, options), ...(delegation ? { delegation } : {}) };
    const toolset = new Toolset(this.registry, this.config, {
      ...session,
      depth: session.delegation?.depth ?? 0,
    });
    const systemMessage = session.systemPrompt ?? defaultSystemPrompt(toolset.serverToolNames);
    return { session, toolset, systemMessage };
  }

  /**
   * The owner's session named by a frontend chat (or thread) id: created with `options` by the first
   * request (for `endUser`, the request's X-End-User), found by later ones (whose options are
   * ignored). With an end user, another end user's chat is a 404.
   */
  async openChat(
    owner: string,
    chatId: string,
    options: SessionOptions,
    endUser: string | null,
  ): Promise<SessionRow> {
    assertChatId(chatId);
    const existing = await this.sessions.findByChatId(owner, chatId);
    if (existing) return ofEndUser(existing, endUser, chatId);
    const { session, systemMessage } = this.draft(owner, {
      ...options,
      endUser: sessionEndUser(endUser, options.endUser) ?? undefined,
    });
    try {
      return await this.sessions.insert(this.runs.queryable, { ...session, chatId }, systemMessage);
    } catch (err) {
      // Another request of the same chat created it first.
      const raced = await this.sessions.findByChatId(owner, chatId);
      if (raced) return ofEndUser(raced, endUser, chatId);
      throw err;
    }
  }

  /** The owner's session of a frontend chat or thread id, if there is one (of `endUser`, when given). */
  async findChat(owner: string, chatId: string, endUser: string | null): Promise<SessionRow | null> {
    assertChatId(chatId);
    const session = await this.sessions.findByChatId(owner, chatId);
    return session && (endUser === null || session.endUser === endUser) ? session : null;
  }

  /** Replaces the client tools of a session (AG-UI sends its tools with every input); checked as at creation. */
  async setClientTools(
    owner: string,
    session: SessionRow,
    clientTools: ClientToolDefinition[],
  ): Promise<void> {
    this.prepare(owner, { clientTools });
    await this.sessions.updateClientTools(session.id, clientTools);
  }

  async get(
    owner: string,
    id: string,
  ): Promise<SessionRow & { messages: MessageRow[]; activeRunId: string | null; deletedFiles: Set<string> }> {
    const found = await this.sessions.findWithActiveRun(id, owner);
    if (!found) throw sessionNotFound(id);
    const messages = await this.conversation.sessionMessages(id);
    return {
      ...found.session,
      activeRunId: found.activeRunId,
      messages,
      deletedFiles: await this.deletedFiles(messages),
    };
  }

  /** The files the messages' parts name that no longer exist ("Attachments": their parts say deleted). */
  private async deletedFiles(messages: readonly MessageRow[]): Promise<Set<string>> {
    const ids = [
      ...new Set(
        messages.flatMap((m) => (m.parts ?? []).flatMap((p) => (p.type === 'file' ? [p.fileId] : []))),
      ),
    ];
    const existing = await this.files.findByIds(ids);
    return new Set(ids.filter((fileId) => !existing.has(fileId)));
  }

  async rename(owner: string, id: string, title: string): Promise<SessionRow> {
    const session = await this.sessions.updateTitle(id, owner, title);
    if (!session) throw sessionNotFound(id);
    return session;
  }

  /** What the session's tool calls changed in the workspace: path, sha256 before and after. */
  async changes(owner: string, id: string): Promise<FileChangeRecord[]> {
    await this.find(owner, id);
    return this.conversation.sessionChanges(id);
  }

  async find(owner: string, id: string, tx?: Queryable): Promise<SessionRow> {
    const session = await this.sessions.find(id, owner, tx);
    if (!session) throw sessionNotFound(id);
    return session;
  }

  /** The owner's session and its active run, if any; 404 when the owner has no such session. */
  async findWithActiveRun(
    owner: string,
    id: string,
  ): Promise<{ session: SessionRow; activeRunId: string | null }> {
    const found = await this.sessions.findWithActiveRun(id, owner);
    if (!found) throw sessionNotFound(id);
    return found;
  }

  /** The owner's sessions (only `endUser`'s when not null), newest first; `children`: child sessions too. */
  async list(
    owner: string,
    endUser: string | null,
    limit: number,
    cursor: string | undefined,
    children = false,
  ): Promise<SessionPage> {
    const rows = await this.sessions.list(
      owner,
      endUser,
      limit + 1,
      cursor ? decodeCursor(cursor) : null,
      children,
    );
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      data: page.map(({ cursorAt: _, ...session }) => session),
      nextCursor: rows.length > limit && last ? encodeCursor(last.cursorAt, last.id) : null,
    };
  }

  async delete(owner: string, id: string): Promise<void> {
    const { deleted, activeRunId } = await this.sessions.delete(id, owner);
    if (deleted) {
      // Its background commands end before its workspace may go (their rows went with the session).
      await this.background.sessionDeleted(id);
      await this.workspaces.sessionDeleted(owner, id);
      return;
    }
    if (activeRunId) {
      throw new DomainError(ErrorCode.SessionBusy, `Session ${id} has an active run; cancel it first`, {
        runId: activeRunId,
      });
    }
    throw sessionNotFound(id);
  }

  private agentOf(name: string | undefined): AgentConfig | undefined {
    if (name === undefined) return undefined;
    const agent = this.config.agents.find((a) => a.name === name);
    if (agent === undefined) {
      throw invalid(`agent ${JSON.stringify(name)} is not an agent of this server (see GET /v1/agents)`);
    }
    return agent;
  }

  /** Checks the options against what this server offers; a bad one is a 400 naming the field. */
  private prepare(owner: string, o: SessionOptions): NewSession {
    if (o.maxIterations !== undefined && o.maxIterations > this.config.maxIterations) {
      throw invalid(`maxIterations must not be greater than ${this.config.maxIterations} (MAX_ITERATIONS)`);
    }
    if (o.model !== undefined) {
      // A provider that is not configured, or a model outside LLM_MODELS, is never served by another.
      const problem = this.modelProviders.problem(o.model);
      if (problem !== undefined)
        throw invalid(`model ${JSON.stringify(o.model)} is not accepted: ${problem}`);
    }
    const serverTools = new Set(this.registry.enabled().map((t) => t.name));
    for (const name of o.tools ?? []) {
      // An MCP tool whose server is down right now is still a tool of this server.
      if (!serverTools.has(name) && this.registry.get(name) === undefined) {
        throw invalid(
          `tools contains ${JSON.stringify(name)}, which is not a tool of this server (see GET /v1/tools)`,
        );
      }
    }
    const clientNames = new Set<string>();
    for (const [i, tool] of (o.clientTools ?? []).entries()) {
      const name = tool.function.name;
      if (this.registry.isServerToolName(name)) {
        throw invalid(`clientTools.${i}.function.name ${JSON.stringify(name)} clashes with a server tool`);
      }
      if (clientNames.has(name))
        throw invalid(`clientTools.${i}.function.name ${JSON.stringify(name)} is given twice`);
      clientNames.add(name);
      if (tool.function.parameters !== undefined) {
        const check = validateJsonSchema(tool.function.parameters);
        if (!check.ok) throw invalid(`clientTools.${i}.function.${check.message}`);
      }
    }
    // The agent's own tools and model were checked at start-up (agents/), against every tool the
    // server may offer; what the client gave is checked above.
    const agent = this.agentOf(o.agent);
    return {
      id: randomUUID(),
      owner,
      title: o.title ?? null,
      systemPrompt: o.systemPrompt ?? agent?.systemPrompt ?? null,
      model: o.model ?? agent?.model ?? null,
      mode: o.mode ?? agent?.mode ?? 'safe',
      tools: o.tools ?? (agent?.tools ? [...agent.tools] : null),
      clientTools: o.clientTools ?? [],
      maxIterations: o.maxIterations ?? agent?.maxIterations ?? null,
      maxTokens: o.maxTokens ?? null,
      maxCostUsd: o.maxCostUsd ?? null,
      reasoning: o.reasoning ?? null,
      agent: agent?.name ?? null,
      responseFormat: o.responseFormat === undefined ? null : checkResponseFormat(o.responseFormat),
      endUser: o.endUser ?? null,
    };
  }
}

/** `session` when the request's end user (if any) may see it; else the 404 of a chat id it does not have. */
function ofEndUser(session: SessionRow, endUser: string | null, chatId: string): SessionRow {
  if (endUser !== null && session.endUser !== endUser) {
    throw new DomainError(ErrorCode.SessionNotFound, `Chat ${chatId} not found`);
  }
  return session;
}

export function sessionNotFound(id: string): DomainError {
  return new DomainError(ErrorCode.SessionNotFound, `Session ${id} not found`);
}

/** Chat (and thread) ids are 1–200 characters: a longer one would not fit the session's index. */
function assertChatId(chatId: string): void {
  if (chatId.length < 1 || chatId.length > 200) throw invalid('chat ids are 1–200 characters');
}

function invalid(message: string): DomainError {
  return new DomainError(ErrorCode.InvalidRequest, message);
}
