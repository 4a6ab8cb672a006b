import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig, SessionMode } from '../config/app-config';
import { DomainError, ErrorCode } from '../common/domain-error';
import type { ClientToolDefinition } from '../persistence/entities/session.entity';
import { validateJsonSchema } from '../tools/json-schema';
import { ToolRegistry } from '../tools/tool-registry.service';
import {
  ConversationStore,
  type FileChangeRecord,
  type MessageRow,
} from '../store/conversation-store.service';
import { RunStore, type Queryable } from '../store/run-store.service';
import { SessionStore, type NewSession, type SessionRow } from '../store/session-store.service';
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
}

export interface SessionPage {
  data: SessionRow[];
  nextCursor: string | null;
}

/** Sessions: their options checked against this server, created, listed, read and deleted per owner. */
@Injectable()
export class SessionsService {
  constructor(
    private readonly sessions: SessionStore,
    private readonly runs: RunStore,
    private readonly conversation: ConversationStore,
    private readonly registry: ToolRegistry,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(
    owner: string,
    options: SessionOptions,
    tx: Queryable = this.runs.queryable,
  ): Promise<SessionRow> {
    const session = this.prepare(owner, options);
    const toolset = new Toolset(this.registry, this.config, session);
    return this.sessions.insert(
      tx,
      session,
      session.systemPrompt ?? defaultSystemPrompt(toolset.serverToolNames),
    );
  }

  /**
   * The owner's session named by a frontend chat (or thread) id: created with `options` by the first
   * request, found by later ones (whose options are ignored).
   */
  async openChat(owner: string, chatId: string, options: SessionOptions): Promise<SessionRow> {
    const existing = await this.sessions.findByChatId(owner, chatId);
    if (existing) return existing;
    const session = { ...this.prepare(owner, options), chatId };
    const toolset = new Toolset(this.registry, this.config, session);
    try {
      return await this.sessions.insert(
        this.runs.queryable,
        session,
        session.systemPrompt ?? defaultSystemPrompt(toolset.serverToolNames),
      );
    } catch (err) {
      // Another request of the same chat created it first.
      const raced = await this.sessions.findByChatId(owner, chatId);
      if (raced) return raced;
      throw err;
    }
  }

  /** The owner's session of a frontend chat or thread id, if there is one. */
  findChat(owner: string, chatId: string): Promise<SessionRow | null> {
    return this.sessions.findByChatId(owner, chatId);
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

  async get(owner: string, id: string): Promise<SessionRow & { messages: MessageRow[] }> {
    const session = await this.sessions.find(id, owner);
    if (!session) throw sessionNotFound(id);
    return { ...session, messages: await this.conversation.sessionMessages(id) };
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

  async list(owner: string, limit: number, cursor: string | undefined): Promise<SessionPage> {
    const rows = await this.sessions.list(owner, limit + 1, cursor ? decodeCursor(cursor) : null);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      data: page.map(({ cursorAt: _, ...session }) => session),
      nextCursor: rows.length > limit && last ? encodeCursor(last.cursorAt, last.id) : null,
    };
  }

  async delete(owner: string, id: string): Promise<void> {
    const { deleted, activeRunId } = await this.sessions.delete(id, owner);
    if (deleted) return;
    if (activeRunId) {
      throw new DomainError(ErrorCode.SessionBusy, `Session ${id} has an active run; cancel it first`, {
        runId: activeRunId,
      });
    }
    throw sessionNotFound(id);
  }

  /** Checks the options against what this server offers; a bad one is a 400 naming the field. */
  private prepare(owner: string, o: SessionOptions): NewSession {
    if (o.maxIterations !== undefined && o.maxIterations > this.config.maxIterations) {
      throw invalid(`maxIterations must not be greater than ${this.config.maxIterations} (MAX_ITERATIONS)`);
    }
    const serverTools = new Set(this.registry.enabled().map((t) => t.name));
    for (const name of o.tools ?? []) {
      if (!serverTools.has(name)) {
        throw invalid(
          `tools contains ${JSON.stringify(name)}, which is not a tool of this server (see GET /v1/tools)`,
        );
      }
    }
    const clientNames = new Set<string>();
    for (const [i, tool] of (o.clientTools ?? []).entries()) {
      const name = tool.function.name;
      if (this.registry.get(name)) {
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
    return {
      id: randomUUID(),
      owner,
      title: o.title ?? null,
      systemPrompt: o.systemPrompt ?? null,
      model: o.model ?? null,
      mode: o.mode ?? 'safe',
      tools: o.tools ?? null,
      clientTools: o.clientTools ?? [],
      maxIterations: o.maxIterations ?? null,
    };
  }
}

export function sessionNotFound(id: string): DomainError {
  return new DomainError(ErrorCode.SessionNotFound, `Session ${id} not found`);
}

function invalid(message: string): DomainError {
  return new DomainError(ErrorCode.InvalidRequest, message);
}

function encodeCursor(createdAt: string, id: string): string {
  return Buffer.from(JSON.stringify([createdAt, id])).toString('base64url');
}

function decodeCursor(cursor: string): { createdAt: string; id: string } {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as [unknown, unknown];
    if (typeof createdAt === 'string' && typeof id === 'string' && !Number.isNaN(Date.parse(createdAt))) {
      return { createdAt, id };
    }
  } catch {
    // fall through
  }
  throw invalid('cursor is not a cursor this server gave out');
}
