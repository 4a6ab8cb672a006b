import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { DomainError, ErrorCode } from '../common/domain-error';
import { decodeCursor, encodeCursor } from '../common/page-cursor';
import { Sessions } from '../sessions/sessions.service';
import {
  ScheduleStore,
  type ScheduleChanges,
  type ScheduleRow,
  type ScheduleRunRow,
} from '../store/schedule-store.service';
import { cronProblem, nextDueTime } from './cron';
import type { CreateScheduleDto } from './dto/create-schedule.dto';
import type { UpdateScheduleDto } from './dto/update-schedule.dto';

/** The due times GET /v1/schedules/:id/runs lists, newest first. */
const LISTED_RUNS = 100;

/**
 * A key's schedules ("Schedules and webhooks"): created, listed, changed and deleted, each visible
 * to its key — and, made with an end user, to that end user only. ScheduleTicker starts their runs.
 */
@Injectable()
export class Schedules {
  constructor(
    private readonly store: ScheduleStore,
    private readonly sessions: Sessions,
  ) {}

  async create(owner: string, endUser: string | null, dto: CreateScheduleDto): Promise<ScheduleRow> {
    const { cron, timezone = 'UTC', prompt, sessionId, onActive, ...options } = dto;
    assertUsable(cron, timezone);
    const given = Object.entries(options).filter(([, v]) => v !== undefined);
    if (sessionId) {
      if (given.length > 0) {
        throw invalid(`${given.map(([k]) => k).join(', ')} can only be set for runs without a sessionId`);
      }
      await this.sessions.findWithActiveRun(owner, sessionId);
    }
    return this.store.insert({
      id: randomUUID(),
      owner,
      endUser,
      cron,
      timezone,
      prompt,
      sessionId: sessionId ?? null,
      sessionOptions: Object.fromEntries(given),
      onActive: onActive ?? 'enqueue',
      enabled: true,
      nextRunAt: nextDueTime(cron, timezone, new Date()),
    });
  }

  async get(owner: string, endUser: string | null, id: string): Promise<ScheduleRow> {
    const found = await this.store.find(owner, endUser, id);
    if (!found) throw scheduleNotFound(id);
    return found;
  }

  async list(
    owner: string,
    endUser: string | null,
    limit: number,
    cursor: string | undefined,
  ): Promise<{ data: ScheduleRow[]; nextCursor: string | null }> {
    const rows = await this.store.list(owner, endUser, limit + 1, cursor ? decodeCursor(cursor) : null);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      data: page.map(({ cursorAt: _, ...schedule }) => schedule),
      nextCursor: rows.length > limit && last ? encodeCursor(last.cursorAt, last.id) : null,
    };
  }

  /** A changed cron, time zone or `enabled` moves the next due time (from now; none while disabled). */
  async update(
    owner: string,
    endUser: string | null,
    id: string,
    dto: UpdateScheduleDto,
  ): Promise<ScheduleRow> {
    const current = await this.get(owner, endUser, id);
    const cron = dto.cron ?? current.cron;
    const timezone = dto.timezone ?? current.timezone;
    const enabled = dto.enabled ?? current.enabled;
    assertUsable(cron, timezone);
    const changes: ScheduleChanges = { ...dto };
    const moved = dto.cron !== undefined || dto.timezone !== undefined || dto.enabled !== undefined;
    if (moved) changes.nextRunAt = enabled ? nextDueTime(cron, timezone, new Date()) : null;
    const updated = await this.store.update(owner, endUser, id, changes);
    if (!updated) throw scheduleNotFound(id);
    return updated;
  }

  async delete(owner: string, endUser: string | null, id: string): Promise<void> {
    if (!(await this.store.delete(owner, endUser, id))) throw scheduleNotFound(id);
  }

  /** Its due times, skipped ones included, newest first. */
  async runs(owner: string, endUser: string | null, id: string): Promise<ScheduleRunRow[]> {
    await this.get(owner, endUser, id);
    return this.store.runs(id, LISTED_RUNS);
  }
}

function assertUsable(cron: string, timezone: string): void {
  const problem = cronProblem(cron, timezone);
  if (problem) throw invalid(problem);
}

function invalid(message: string): DomainError {
  return new DomainError(ErrorCode.InvalidRequest, message);
}

export function scheduleNotFound(id: string): DomainError {
  return new DomainError(ErrorCode.ScheduleNotFound, `Schedule ${id} not found`);
}
