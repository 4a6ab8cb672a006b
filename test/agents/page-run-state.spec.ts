import { applyEvent, newRun, type RunEvent, type RunView } from '../../web/src/run-state';

/** The page's view of a run after `events` (each numbered by the stream it came in). */
function viewOf(runId: string, events: Omit<RunEvent, 'seq'>[]): RunView {
  return events.reduce<RunView>(
    (view, e, i) => applyEvent(view, { ...e, seq: i + 1 } as RunEvent, 0),
    newRun(runId, true),
  );
}

describe("the page's run view with delegations", () => {
  it("keeps a child's work out of the answer and nests it under its delegate call, approvals included", () => {
    const view = viewOf('root', [
      { type: 'run_started', runId: 'root', model: 'm' },
      {
        type: 'tool_call_start',
        runId: 'root',
        toolCallId: 'd1',
        name: 'delegate',
        arguments: {},
        executor: 'server',
      },
      { type: 'subagent_started', runId: 'root', toolCallId: 'd1', agent: 'writer', childRunId: 'child' },
      { type: 'text', runId: 'child', parentRunId: 'root', delta: 'Child thinking.' },
      {
        type: 'tool_call_start',
        runId: 'child',
        parentRunId: 'root',
        toolCallId: 'w1',
        name: 'write_file',
        arguments: { path: 'a' },
        executor: 'server',
      },
      {
        type: 'tool_approval_required',
        runId: 'child',
        parentRunId: 'root',
        toolCallId: 'w1',
        name: 'write_file',
        arguments: { path: 'a' },
        reason: 'diff',
      },
    ]);
    expect(view.segments).toEqual([{ kind: 'tool', id: 'd1' }]);
    expect(view.status).toBe('requires_action');
    expect(view.delegations).toEqual({ d1: 'child' });
    const child = view.children.child;
    expect(child.segments).toEqual([
      { kind: 'text', text: 'Child thinking.' },
      { kind: 'tool', id: 'w1' },
    ]);
    expect(child.calls.w1.approvalReason).toBe('diff');
  });
});
