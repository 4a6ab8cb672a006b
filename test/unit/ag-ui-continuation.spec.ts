import { knownToolCalls, lastStreamEnd } from '../../src/frontends/ag-ui/ag-ui-continuation';
import type { RunEvent } from '../../src/events/run-events';

const usage = { promptTokens: 1, completionTokens: 1 };
let seq = 0;
const ev = (body: Record<string, unknown>): RunEvent => ({ runId: 'r', seq: ++seq, ...body }) as RunEvent;

/** A step that asks for a read (no approval) and a write (approval), then, once approved, an answer. */
function runWithApproval(): RunEvent[] {
  seq = 0;
  return [
    ev({ type: 'run_started', sessionId: 's', model: 'm' }),
    ev({ type: 'tool_call_start', toolCallId: 'read', name: 'read_file', arguments: {}, executor: 'server' }),
    ev({
      type: 'tool_call_start',
      toolCallId: 'write',
      name: 'write_file',
      arguments: {},
      executor: 'server',
    }),
    ev({
      type: 'tool_approval_required',
      toolCallId: 'write',
      name: 'write_file',
      arguments: {},
      reason: 'r',
    }),
    ev({ type: 'step_finished', iteration: 1, finishReason: 'tool_calls', usage }),
    // the wait: seq 5 is the last event the client's stream had
    ev({
      type: 'tool_call_result',
      toolCallId: 'read',
      name: 'read_file',
      content: 'x',
      isError: false,
      durationMs: 1,
    }),
    ev({
      type: 'tool_call_result',
      toolCallId: 'write',
      name: 'write_file',
      content: 'ok',
      isError: false,
      durationMs: 1,
    }),
    ev({ type: 'text', delta: 'Done.' }),
  ];
}

describe('where an AG-UI client’s last stream of a run ended', () => {
  it('is the last event before the run went on from the newest wait the client knows', () => {
    expect(lastStreamEnd(runWithApproval(), new Set(['read', 'write']))).toBe(5);
  });

  it('is the run’s last event while nothing went on after the wait', () => {
    expect(lastStreamEnd(runWithApproval().slice(0, 5), new Set(['write']))).toBe(5);
  });

  it('is 0 (the whole run) for a client that knows none of its waits', () => {
    expect(lastStreamEnd(runWithApproval(), new Set(['read']))).toBe(0);
    expect(lastStreamEnd(runWithApproval(), new Set())).toBe(0);
  });

  it('moves to a later wait the client also saw', () => {
    const events = runWithApproval();
    events.push(
      ev({ type: 'step_finished', iteration: 2, finishReason: 'tool_calls', usage }),
      ev({
        type: 'tool_call_start',
        toolCallId: 'time',
        name: 'get_time',
        arguments: {},
        executor: 'client',
      }),
      ev({ type: 'step_finished', iteration: 3, finishReason: 'tool_calls', usage }),
      ev({
        type: 'tool_call_result',
        toolCallId: 'time',
        name: 'get_time',
        content: '12:00',
        isError: false,
        durationMs: 1,
      }),
    );
    expect(lastStreamEnd(events, new Set(['write', 'time']))).toBe(11);
    expect(lastStreamEnd(events, new Set(['write']))).toBe(5);
  });

  it('knows the calls of the client’s assistant and tool messages', () => {
    expect(
      knownToolCalls([
        { id: 'u', role: 'user', content: 'hi' },
        {
          id: 'a',
          role: 'assistant',
          toolCalls: [{ id: 'c1', type: 'function', function: { name: 'x', arguments: '{}' } }],
        },
        { id: 't', role: 'tool', toolCallId: 'c2', content: 'r' },
      ]),
    ).toEqual(new Set(['c1', 'c2']));
  });
});
