import { EventType } from '@ag-ui/core';
import type { RunEvent, RunEventBody } from '../../src/events/run-events';
import { newAgUiProjection, projectAgUiEvent } from '../../src/frontends/ag-ui/ag-ui-projection';
import { newUiProjection, projectUiEvent } from '../../src/frontends/ai-sdk/ui-message-projection';

const usage = { promptTokens: 3, completionTokens: 4, costUsd: null };
const output = { severity: 'high', files: ['a.ts'] };

function log(...bodies: RunEventBody[]): RunEvent[] {
  return bodies.map((b, i) => ({ ...b, runId: 'run-1', seq: i + 1 }));
}

const structuredRun = log(
  { type: 'run_started', sessionId: 's-1', model: 'm' },
  { type: 'text', delta: JSON.stringify(output) },
  { type: 'step_finished', iteration: 1, finishReason: 'stop', usage },
  { type: 'done', sessionId: 's-1', status: 'completed', iterations: 1, usage, messageId: 'm-1', output },
);

/** done.output in the frontend protocols ("Structured output"). */
describe('structured output in the projections', () => {
  it('the AI SDK stream carries data-output ({ output }) right before its finish', () => {
    const s = newUiProjection('run-1', 's-1');
    const chunks = structuredRun.flatMap((e) => projectUiEvent(s, e));
    const types = chunks.map((c) => c.type);
    expect(types.slice(-2)).toEqual(['data-output', 'finish']);
    expect(chunks.at(-2)).toEqual({ type: 'data-output', data: { output } });
  });

  it('AG-UI carries a STATE_SNAPSHOT of { output } right before RUN_FINISHED', () => {
    const s = newAgUiProjection({ threadId: 't-1', inputRunId: 'in-1', runId: 'run-1', sessionId: 's-1' });
    const events = structuredRun.flatMap((e) => projectAgUiEvent(s, e));
    expect(events.slice(-2).map((e) => e.type)).toEqual([EventType.STATE_SNAPSHOT, EventType.RUN_FINISHED]);
    expect(events.at(-2)).toEqual({ type: EventType.STATE_SNAPSHOT, snapshot: { output } });
  });
});
