import { buildStepRecord, stepOutcome, type ModelTurn } from '../../src/agent/step-record';
import { errorSettlement } from '../../src/agent/tool-results';
import type { PlannedCall } from '../../src/agent/tool-steps.service';

const run = {
  id: 'run-1',
  sessionId: 'session-1',
  iterations: 0,
  maxIterations: 5,
  promptTokens: 100,
  completionTokens: 10,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
  usageEstimated: false,
  costUsd: 0.5,
};
const turn = (text: string): ModelTurn => ({
  text,
  finishReason: 'stop',
  usage: { promptTokens: 7, completionTokens: 3 },
  toolCalls: [],
  modelCall: {
    id: 'call-row',
    runId: 'run-1',
    sessionId: 'session-1',
    owner: 'tester',
    endUser: null,
    iteration: 1,
    provider: 'openai',
    model: 'openai/m',
    promptTokens: 7,
    completionTokens: 3,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    costUsd: 0.25,
    estimated: false,
  },
});
function planned(position: number, status: PlannedCall['status'], name = 'read_file'): PlannedCall {
  return {
    id: `row-${position}`,
    callId: `call-${position}`,
    position,
    name,
    rawArguments: '{"path":"a"}',
    eventArguments: { path: 'a' },
    executor: status === 'awaiting_client' ? 'client' : 'server',
    status,
    settlement: status === 'error' ? errorSettlement('UNKNOWN_TOOL', 'no such tool') : null,
    approvalReason: status === 'pending_approval' ? 'needs approval' : null,
  };
}
let ids = 0;
const build = (calls: PlannedCall[], over: Partial<typeof run> = {}) =>
  buildStepRecord({
    run: { ...run, ...over },
    turn: turn(calls.length === 0 ? 'The answer.' : ''),
    calls,
    nextMessageSeq: 10,
    approvalTimeoutMs: 60_000,
    now: new Date(0),
    newId: () => `id-${++ids}`,
  });

describe('the step, decided by pure functions', () => {
  it('names the stop condition of every kind of step', () => {
    expect(stepOutcome([], false)).toBe('completed');
    expect(stepOutcome([], true)).toBe('completed');
    expect(stepOutcome([planned(0, 'pending')], true)).toBe('max_iterations');
    expect(stepOutcome([planned(0, 'pending'), planned(1, 'pending_approval')], false)).toBe(
      'requires_action',
    );
    expect(stepOutcome([planned(0, 'awaiting_client')], false)).toBe('requires_action');
    expect(stepOutcome([planned(0, 'pending'), planned(1, 'error')], false)).toBe('continue');
  });

  it('records an answer as the run completed: step_finished then done, with the summed usage and cost', () => {
    const step = build([]);
    expect(step.outcome).toBe('completed');
    expect(step.events.map((e) => e.type)).toEqual(['step_finished', 'done']);
    expect(step.events[0]).toMatchObject({ usage: { promptTokens: 7, completionTokens: 3, costUsd: 0.25 } });
    expect(step.events[1]).toMatchObject({
      status: 'completed',
      iterations: 1,
      usage: { promptTokens: 107, completionTokens: 13, costUsd: 0.75 },
      messageId: step.assistantId,
    });
    expect(step.run).toMatchObject({
      status: 'completed',
      finished: true,
      finalMessageId: step.assistantId,
      costUsd: 0.75,
    });
    expect(step.modelCall).toMatchObject({ model: 'openai/m', costUsd: 0.25 });
    expect(step.messages).toEqual([
      expect.objectContaining({ seq: 10, role: 'assistant', content: 'The answer.' }),
    ]);
    expect(step.nextMessageSeq).toBe(11);
    expect(step.runnable).toEqual([]);
  });

  it('reserves a message position per call, stores refused calls with their result, and runs the rest', () => {
    const step = build([planned(0, 'pending'), planned(1, 'error', 'nope')]);
    expect(step.outcome).toBe('continue');
    expect(step.events.map((e) => e.type)).toEqual([
      'tool_call_start',
      'tool_call_start',
      'tool_call_result',
      'step_finished',
    ]);
    expect(step.messages.map((m) => [m.seq, m.role])).toEqual([
      [10, 'assistant'],
      [12, 'tool'],
    ]);
    expect(step.nextMessageSeq).toBe(13);
    expect(step.calls.map((c) => c.status)).toEqual(['running', 'error']);
    expect(step.runnable.map((c) => [c.callId, c.messageSeq])).toEqual([['call-0', 11]]);
    expect(step.run).toEqual({
      iterations: 1,
      promptTokens: 107,
      completionTokens: 13,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
      usageEstimated: false,
      costUsd: 0.75,
    });
  });

  it('hands a waiting step to people: approval asked, lease released, nothing runs now', () => {
    const step = build([planned(0, 'pending'), planned(1, 'pending_approval')]);
    expect(step.outcome).toBe('requires_action');
    expect(step.events.map((e) => e.type)).toEqual([
      'tool_call_start',
      'tool_call_start',
      'tool_approval_required',
      'step_finished',
    ]);
    expect(step.run).toMatchObject({ status: 'requires_action', leaseOwner: null });
    expect(step.calls.map((c) => [c.status, c.deadlineMs])).toEqual([
      ['pending', null],
      ['pending_approval', 60_000],
    ]);
    expect(step.runnable).toEqual([]);
  });

  it('ends the run at its last allowed model call', () => {
    const step = build([planned(0, 'error')], { iterations: 4 });
    expect(step.outcome).toBe('max_iterations');
    expect(step.events.at(-1)).toMatchObject({ type: 'done', status: 'max_iterations', iterations: 5 });
    expect(step.run).toMatchObject({ status: 'max_iterations', finished: true });
  });
});
