import { EventType } from '@ag-ui/core';
import type { RunEvent, RunEventBody } from '../../src/events/run-events';
import {
  agUiWaitingFinish,
  newAgUiProjection,
  projectAgUiEvent,
} from '../../src/frontends/ag-ui/ag-ui-projection';
import { readLastMessage } from '../../src/frontends/ai-sdk/ui-message-input';
import {
  newUiProjection,
  projectUiEvent,
  sdkFinishReason,
  startChunk,
  waitingFinish,
} from '../../src/frontends/ai-sdk/ui-message-projection';

const usage = { promptTokens: 3, completionTokens: 4, costUsd: null };

/** A run taken over mid-answer: the cut step finished as interrupted, then the next model call. */
const takenOver = [
  { type: 'run_started', sessionId: 's-1', model: 'm' },
  { type: 'text', delta: 'Half an ' },
  {
    type: 'step_finished',
    iteration: 1,
    finishReason: 'interrupted',
    usage: { promptTokens: 0, completionTokens: 0, costUsd: 0 },
  },
  { type: 'run_resumed', reason: 'process_lost', iteration: 2 },
  { type: 'text', delta: 'answer.' },
  { type: 'step_finished', iteration: 2, finishReason: 'stop', usage },
  { type: 'done', sessionId: 's-1', status: 'completed', iterations: 2, usage, messageId: 'm-2' },
] as const satisfies readonly RunEventBody[];

function log(...bodies: RunEventBody[]): RunEvent[] {
  return bodies.map((b, i) => ({ ...b, runId: 'run-1', seq: i + 1 }));
}

const toolRun = log(
  { type: 'run_started', sessionId: 's-1', model: 'm' },
  { type: 'text', delta: 'Let me look.' },
  {
    type: 'tool_call_start',
    toolCallId: 'c1',
    name: 'read_file',
    arguments: { path: 'a' },
    executor: 'server',
  },
  {
    type: 'tool_call_start',
    toolCallId: 'c2',
    name: 'write_file',
    arguments: { path: 'b' },
    executor: 'server',
  },
  {
    type: 'tool_approval_required',
    toolCallId: 'c2',
    name: 'write_file',
    arguments: { path: 'b' },
    reason: 'write',
  },
  { type: 'tool_call_start', toolCallId: 'c3', name: 'get_time', arguments: {}, executor: 'client' },
  { type: 'step_finished', iteration: 1, finishReason: 'tool_calls', usage },
  {
    type: 'tool_call_result',
    toolCallId: 'c1',
    name: 'read_file',
    content: 'A',
    isError: false,
    durationMs: 1,
  },
);

describe('the AI SDK UI message projection', () => {
  it('maps a tool step to step, text, tool input, approval request and output chunks', () => {
    const s = newUiProjection('run-1', 's-1');
    const chunks = [
      startChunk(s),
      ...toolRun.flatMap((e) => projectUiEvent(s, e)),
      ...waitingFinish(s, usage),
    ];
    expect(chunks).toEqual([
      { type: 'start', messageId: 'run-1', messageMetadata: { runId: 'run-1', sessionId: 's-1' } },
      { type: 'start-step' },
      { type: 'text-start', id: 'text-2' },
      { type: 'text-delta', id: 'text-2', delta: 'Let me look.' },
      { type: 'text-end', id: 'text-2' },
      {
        type: 'tool-input-available',
        toolCallId: 'c1',
        toolName: 'read_file',
        input: { path: 'a' },
        dynamic: true,
      },
      {
        type: 'tool-input-available',
        toolCallId: 'c2',
        toolName: 'write_file',
        input: { path: 'b' },
        dynamic: true,
      },
      { type: 'tool-approval-request', approvalId: 'c2', toolCallId: 'c2' },
      { type: 'tool-input-available', toolCallId: 'c3', toolName: 'get_time', input: {} },
      { type: 'finish-step' },
      { type: 'tool-output-available', toolCallId: 'c1', output: 'A', dynamic: true },
      {
        type: 'finish',
        finishReason: 'tool-calls',
        messageMetadata: { runId: 'run-1', sessionId: 's-1', status: 'requires_action', usage },
      },
    ]);
    expect([...s.waiting].sort()).toEqual(['c2', 'c3']);
  });

  it('continues after a decision without repeating what the client has, and skips its own results', () => {
    const more = log(
      ...toolRun.map(({ runId: _r, seq: _s, ...b }) => b),
      {
        type: 'tool_call_result',
        toolCallId: 'c2',
        name: 'write_file',
        content: 'no',
        isError: true,
        durationMs: 1,
        errorCode: 'REJECTED',
      },
      {
        type: 'tool_call_result',
        toolCallId: 'c3',
        name: 'get_time',
        content: '12:00',
        isError: false,
        durationMs: 1,
      },
      { type: 'text', delta: 'Done.' },
      { type: 'step_finished', iteration: 2, finishReason: 'stop', usage },
      { type: 'done', sessionId: 's-1', status: 'completed', iterations: 2, usage, messageId: 'm' },
    );
    const s = newUiProjection('run-1', 's-1', toolRun.length, new Set(['c3']));
    const chunks = more.flatMap((e) => projectUiEvent(s, e));
    expect(chunks.map((c) => c.type)).toEqual([
      'tool-output-denied',
      'start-step',
      'text-start',
      'text-delta',
      'text-end',
      'finish-step',
      'finish',
    ]);
    expect(chunks.at(-1)).toMatchObject({ finishReason: 'stop', messageMetadata: { status: 'completed' } });
    expect(s.ended).toBe(true);
  });

  it('ends a failed run with an error chunk and a cancelled one as interrupted', () => {
    const failed = newUiProjection('run-1', 's-1');
    const out = log(
      { type: 'text', delta: 'Hi' },
      { type: 'error', code: 'UPSTREAM', message: 'boom', retryable: true },
    ).flatMap((e) => projectUiEvent(failed, e));
    expect(out.slice(-3)).toEqual([
      { type: 'text-end', id: 'text-1' },
      { type: 'finish-step' },
      { type: 'error', errorText: 'boom' },
    ]);
    const cancelled = newUiProjection('run-1', 's-1');
    const end = projectUiEvent(
      cancelled,
      log({ type: 'done', sessionId: 's-1', status: 'cancelled', iterations: 0, usage, messageId: null })[0],
    );
    expect(end).toEqual([expect.objectContaining({ type: 'finish', finishReason: 'interrupted' })]);
  });

  it('finishes a budget_exceeded run like one at the iteration cap, in both protocols', () => {
    for (const status of ['max_iterations', 'budget_exceeded'] as const) {
      const done = log({ type: 'done', sessionId: 's-1', status, iterations: 3, usage, messageId: 'm' })[0];
      expect(projectUiEvent(newUiProjection('run-1', 's-1'), done)).toEqual([
        expect.objectContaining({
          type: 'finish',
          finishReason: 'other',
          messageMetadata: expect.objectContaining({ status }),
        }),
      ]);
      const ids = { threadId: 't-1', inputRunId: 'in-1', runId: 'run-1', sessionId: 's-1' };
      expect(projectAgUiEvent(newAgUiProjection(ids), done)).toEqual([
        expect.objectContaining({
          type: EventType.RUN_FINISHED,
          result: expect.objectContaining({ status }),
        }),
      ]);
    }
  });

  it("translates the upstream's finish reasons into the SDK's set", () => {
    expect(
      ['stop', 'length', 'content_filter', 'tool_calls', 'interrupted', 'weird'].map(sdkFinishReason),
    ).toEqual(['stop', 'length', 'content-filter', 'tool-calls', 'interrupted', 'other']);
  });

  it('ends the interrupted step at a take-over and starts a new one, keeping the text already sent', () => {
    const s = newUiProjection('run-1', 's-1');
    const perEvent = log(...takenOver).map((e) => projectUiEvent(s, e));
    // The new step starts at the take-over itself, before the next model call says anything.
    expect(perEvent[3]).toEqual([{ type: 'start-step' }]);
    const out = perEvent.flat();
    expect(out.map((c) => c.type)).toEqual([
      'start-step',
      'text-start',
      'text-delta',
      'text-end',
      'finish-step',
      'start-step',
      'text-start',
      'text-delta',
      'text-end',
      'finish-step',
      'finish',
    ]);
  });

  it('reads a user prompt, or the approval responses and outputs of the last assistant message', () => {
    expect(
      readLastMessage([
        { role: 'user', parts: [{ type: 'text', text: 'a' }, { type: 'file' }, { type: 'text', text: 'b' }] },
      ]),
    ).toEqual({
      kind: 'prompt',
      prompt: 'a\nb',
    });
    expect(
      readLastMessage([
        {
          role: 'assistant',
          parts: [
            {
              type: 'dynamic-tool',
              toolCallId: 'c2',
              state: 'approval-responded',
              approval: { id: 'c2', approved: false, reason: 'no' },
            },
            { type: 'tool-get_time', toolCallId: 'c3', state: 'output-available', output: { h: 12 } },
            { type: 'tool-get_time', toolCallId: 'c4', state: 'output-error', errorText: 'denied' },
            { type: 'tool-get_time', toolCallId: 'c5', state: 'input-available' },
          ],
        },
      ]),
    ).toEqual({
      kind: 'decisions',
      decisions: [
        { toolCallId: 'c2', kind: 'approval', approve: false, reason: 'no' },
        { toolCallId: 'c3', kind: 'result', content: '{"h":12}', isError: false },
        { toolCallId: 'c4', kind: 'result', content: 'denied', isError: true },
      ],
    });
    expect(readLastMessage([{ role: 'user', parts: [] }])).toEqual({ kind: 'none' });
  });
});

describe('the AG-UI projection', () => {
  const ids = { threadId: 't', inputRunId: 'client-run', runId: 'run-1', sessionId: 's-1' };

  it('maps a tool step to steps, text messages and tool call events, and a wait to a plain RUN_FINISHED', () => {
    const s = newAgUiProjection(ids);
    const events = toolRun.flatMap((e) => projectAgUiEvent(s, e));
    const pending = [
      {
        toolCallId: 'c2',
        name: 'write_file',
        arguments: {},
        executor: 'server' as const,
        waitingFor: 'approval' as const,
      },
    ];
    const all = [...events, ...agUiWaitingFinish(s, pending)];
    expect(all.map((e) => e.type)).toEqual([
      EventType.STEP_STARTED,
      EventType.TEXT_MESSAGE_START,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TEXT_MESSAGE_END,
      ...Array<EventType>(3)
        .fill(EventType.TOOL_CALL_START)
        .flatMap((t) => [t, EventType.TOOL_CALL_ARGS, EventType.TOOL_CALL_END]),
      EventType.STEP_FINISHED,
      EventType.TOOL_CALL_RESULT,
      EventType.RUN_FINISHED,
    ]);
    expect(all.at(-1)).toEqual({
      type: EventType.RUN_FINISHED,
      threadId: 't',
      runId: 'client-run',
      result: { runId: 'run-1', sessionId: 's-1', status: 'requires_action', pendingToolCalls: pending },
    });
  });

  it('ends the interrupted step at a take-over with STEP_FINISHED and starts the next with STEP_STARTED', () => {
    const s = newAgUiProjection(ids);
    const perEvent = log(...takenOver).map((e) => projectAgUiEvent(s, e));
    expect(perEvent[3]).toEqual([{ type: EventType.STEP_STARTED, stepName: 'model-call-2' }]);
    const out = perEvent.flat();
    expect(out.map((e) => e.type)).toEqual([
      EventType.STEP_STARTED,
      EventType.TEXT_MESSAGE_START,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TEXT_MESSAGE_END,
      EventType.STEP_FINISHED,
      EventType.STEP_STARTED,
      EventType.TEXT_MESSAGE_START,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TEXT_MESSAGE_END,
      EventType.STEP_FINISHED,
      EventType.RUN_FINISHED,
    ]);
    expect(out.filter((e) => e.type === EventType.STEP_STARTED)).toEqual([
      { type: EventType.STEP_STARTED, stepName: 'model-call-1' },
      { type: EventType.STEP_STARTED, stepName: 'model-call-2' },
    ]);
  });

  it("emits no TOOL_CALL_RESULT for the client's own tool messages and RUN_ERROR for a failure", () => {
    const s = newAgUiProjection(ids, 0, new Set(['c3']));
    const events = log(
      {
        type: 'tool_call_result',
        toolCallId: 'c3',
        name: 'get_time',
        content: '12:00',
        isError: false,
        durationMs: 1,
      },
      { type: 'error', code: 'UPSTREAM', message: 'boom', retryable: false },
    ).flatMap((e) => projectAgUiEvent(s, e));
    expect(events).toEqual([{ type: EventType.RUN_ERROR, message: 'boom', code: 'UPSTREAM' }]);
  });
});

describe('reasoning in both projections', () => {
  const thinking = log(
    { type: 'run_started', sessionId: 's-1', model: 'anthropic/claude' },
    { type: 'reasoning', delta: 'Think ' },
    { type: 'reasoning', delta: 'first.' },
    { type: 'text', delta: 'Answer.' },
    { type: 'step_finished', iteration: 1, finishReason: 'stop', usage },
  );

  it('becomes AI SDK reasoning parts, closed before the text, never text', () => {
    const s = newUiProjection('run-1', 's-1');
    expect(thinking.flatMap((e) => projectUiEvent(s, e))).toEqual([
      { type: 'start-step' },
      { type: 'reasoning-start', id: 'reasoning-2' },
      { type: 'reasoning-delta', id: 'reasoning-2', delta: 'Think ' },
      { type: 'reasoning-delta', id: 'reasoning-2', delta: 'first.' },
      { type: 'reasoning-end', id: 'reasoning-2' },
      { type: 'text-start', id: 'text-4' },
      { type: 'text-delta', id: 'text-4', delta: 'Answer.' },
      { type: 'text-end', id: 'text-4' },
      { type: 'finish-step' },
    ]);
  });

  it('becomes AG-UI reasoning events, ended before the text message', () => {
    const s = newAgUiProjection({
      threadId: 't',
      inputRunId: 'client-run',
      runId: 'run-1',
      sessionId: 's-1',
    });
    const events = thinking.flatMap((e) => projectAgUiEvent(s, e));
    expect(events.map((e) => e.type)).toEqual([
      EventType.STEP_STARTED,
      EventType.REASONING_START,
      EventType.REASONING_MESSAGE_START,
      EventType.REASONING_MESSAGE_CONTENT,
      EventType.REASONING_MESSAGE_CONTENT,
      EventType.REASONING_MESSAGE_END,
      EventType.REASONING_END,
      EventType.TEXT_MESSAGE_START,
      EventType.TEXT_MESSAGE_CONTENT,
      EventType.TEXT_MESSAGE_END,
      EventType.STEP_FINISHED,
    ]);
    expect(events[2]).toMatchObject({ messageId: 'run-1-reasoning-2', role: 'reasoning' });
  });
});
