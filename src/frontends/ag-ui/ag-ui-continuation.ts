import type { Message } from '@ag-ui/core';
import type { RunEvent } from '../../events/run-events';

/**
 * The tool calls an AG-UI client already knows of: those of its assistant messages and its tool
 * messages (the @ag-ui/client keeps both from the streams it read).
 */
export function knownToolCalls(messages: readonly Message[]): Set<string> {
  const known = new Set<string>();
  for (const m of messages) {
    if (m.role === 'assistant') for (const c of m.toolCalls ?? []) known.add(c.id);
    if (m.role === 'tool') known.add(m.toolCallId);
  }
  return known;
}

/** What a step records before it waits: its calls, what they wait for, the model call's end. */
const BEFORE_A_WAIT: ReadonlySet<RunEvent['type']> = new Set([
  'tool_call_start',
  'tool_approval_required',
  'step_finished',
]);

/**
 * Where the client's last stream of a run ended: at the newest wait of the run the client knows of
 * (an approval or a client call in its messages). A stream ends when the run waits, which is after
 * its step's calls, approval requests and end are recorded; the first event after those (a result,
 * output, text) is the run going on after the wait, so the stream ended just before it — or at the
 * run's last event when nothing went on yet. A client that knows none of the run's waits saw none of
 * it: 0, the whole run.
 */
export function lastStreamEnd(events: readonly RunEvent[], known: ReadonlySet<string>): number {
  let newestKnownWait = 0;
  for (const e of events) if (isWait(e) && known.has(e.toolCallId)) newestKnownWait = e.seq;
  if (newestKnownWait === 0) return 0;
  const wentOn = events.find((e) => e.seq > newestKnownWait && !BEFORE_A_WAIT.has(e.type));
  return wentOn ? wentOn.seq - 1 : (events.at(-1)?.seq ?? 0);
}

function isWait(
  e: RunEvent,
): e is Extract<RunEvent, { type: 'tool_approval_required' } | { type: 'tool_call_start' }> {
  return e.type === 'tool_approval_required' || (e.type === 'tool_call_start' && e.executor === 'client');
}
