import type { ScheduleRow, ScheduleRunRow } from '../store/schedule-store.service';
import type { ScheduleResponse, ScheduleRunResponse } from './dto/schedule.response';

export function scheduleView(s: ScheduleRow): ScheduleResponse {
  return {
    id: s.id,
    cron: s.cron,
    timezone: s.timezone,
    prompt: s.prompt,
    sessionId: s.sessionId,
    enabled: s.enabled,
    nextRunAt: s.nextRunAt ? new Date(s.nextRunAt).toISOString() : null,
    createdAt: new Date(s.createdAt).toISOString(),
  };
}

export function scheduleRunView(r: ScheduleRunRow): ScheduleRunResponse {
  return {
    runId: r.runId,
    sessionId: r.sessionId,
    status: r.status,
    dueAt: new Date(r.dueAt).toISOString(),
    startedAt: r.startedAt ? new Date(r.startedAt).toISOString() : null,
  };
}
