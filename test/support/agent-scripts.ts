import { existsSync, readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { dirname } from 'node:path';
import { connect } from './database';
import { eventually } from './eventually';
import type { RecordedRequest } from './fake-upstream';
import type { StreamEvent } from './sse-client';

/** A `tool` message as the model was sent it (OpenAI wire shape). */
export interface WireToolMessage {
  role: 'tool';
  tool_call_id: string;
  content: string;
}

/** The tool messages a recorded upstream request carried, in order. */
export function toolMessagesOf(request: RecordedRequest): WireToolMessage[] {
  const messages = (request.body as { messages?: unknown[] }).messages ?? [];
  return messages.filter((m): m is WireToolMessage => (m as { role?: string }).role === 'tool');
}

/** The newest tool message of a request, or undefined when the model has not been sent any. */
export function lastToolMessage(request: RecordedRequest): WireToolMessage | undefined {
  return toolMessagesOf(request).at(-1);
}

/** The names of the tools a request offered the model. */
export function offeredToolNames(request: RecordedRequest): string[] {
  const tools = (request.body as { tools?: { function: { name: string } }[] }).tools ?? [];
  return tools.map((t) => t.function.name);
}

export function eventsOfType(events: readonly StreamEvent[], type: string): StreamEvent[] {
  return events.filter((e) => e.event === type);
}

/** The single event of `type` (for `toolCallId` when given); throws naming what was seen otherwise. */
export function oneEvent(events: readonly StreamEvent[], type: string, toolCallId?: string): StreamEvent {
  const found = events.filter(
    (e) => e.event === type && (toolCallId === undefined || e.data.toolCallId === toolCallId),
  );
  if (found.length !== 1) {
    throw new Error(
      `expected one ${type}${toolCallId ? ` for ${toolCallId}` : ''}, saw ${found.length} in ${events.map((e) => e.event).join(', ')}`,
    );
  }
  return found[0];
}

/**
 * The stream as a readable timeline: `start:<tool>`, `result:<tool>` (`!` when isError), runs of
 * `text` and of `output` collapsed to one entry, everything else by its event name.
 */
export function timeline(events: readonly StreamEvent[]): string[] {
  const out: string[] = [];
  for (const e of events) {
    let label = e.event;
    if (e.event === 'tool_call_start') label = `start:${e.data.name}`;
    if (e.event === 'tool_call_result') label = `result:${e.data.name}${e.data.isError ? '!' : ''}`;
    if (e.event === 'tool_call_output') label = 'output';
    if ((label === 'output' || label === 'text') && out.at(-1) === label) continue;
    out.push(label);
  }
  return out;
}

/** A row of the tool_calls table, as stored. */
export interface ToolCallRecord {
  call_id: string;
  name: string;
  status: string;
  result: string | null;
  is_error: boolean;
  error_code: string | null;
  changes: { path: string; beforeSha256: string | null; afterSha256: string | null }[] | null;
  approval: { approved: boolean; reason: string | null; editedArguments: unknown } | null;
  arguments: unknown;
}

/** Every stored tool call of a run, in the order the model asked for them. */
export async function toolCallRecords(databaseUrl: string, runId: string): Promise<ToolCallRecord[]> {
  const db = await connect(databaseUrl);
  try {
    const { rows } = await db.query<ToolCallRecord>(
      `SELECT call_id, name, status, result, is_error, error_code, changes, approval, arguments
         FROM tool_calls WHERE run_id = $1 ORDER BY iteration, position`,
      [runId],
    );
    return rows;
  } finally {
    await db.end();
  }
}

/**
 * Whether a process is still running. A zombie (dead, but not yet reaped by whatever init the
 * container has) counts as gone: it runs nothing and holds nothing.
 */
export function isRunning(pid: number): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** Whether any process of the process group `pgid` is still running (zombies aside). */
export function groupIsRunning(pgid: number): boolean {
  if (pgid <= 0) return false;
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  // Something in the group exists; it still may be only zombies.
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true;
      } catch {
        // gone while we looked
      }
    }
    return false;
  } catch {
    return true;
  }
}

/**
 * Waits for a command to write its pid file, then reads the number in it — as the host numbers the
 * process. A sandboxed command sees its own PID namespace: its `$$` and `$!` are translated through
 * /proc/<pid>/status (`NSpid`), among the processes working in the pid file's folder. 0 when no such
 * process exists any more (it is gone; isRunning and groupIsRunning say so).
 */
export async function readPidFile(file: string): Promise<number> {
  await eventually(() => existsSync(file) && /^\d+\s*$/.test(readFileSync(file, 'utf8')));
  return hostPid(Number(readFileSync(file, 'utf8').trim()), dirname(file));
}

/** The host's number of the process a (possibly sandboxed) command calls `seen`, working in `cwd`; 0 when gone. */
export function hostPid(seen: number, cwd: string): number {
  const folder = realpathSync(cwd);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const nspid = /^NSpid:\s+(.*)$/m.exec(readFileSync(`/proc/${entry}/status`, 'utf8'))?.[1].split(/\s+/);
      if (nspid === undefined || Number(nspid.at(-1)) !== seen) continue;
      if (readlinkSync(`/proc/${entry}/cwd`) === folder) return Number(entry);
    } catch {
      // gone while we looked, or not ours to read
    }
  }
  return 0;
}
