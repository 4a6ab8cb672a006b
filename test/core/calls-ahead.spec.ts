import { randomUUID } from 'node:crypto';
import { CallsAhead } from '../../src/agent/calls-ahead.service';
import { RunHandle, type FirstCall } from '../../src/agent/run-handle';
import type { RunEventSink } from '../../src/events/run-event-sink';
import type { RunLease } from '../../src/events/run-lease';
import { SentModelCall } from '../../src/llm/sent-model-call';
import type { ModelRequest } from '../../src/llm/model-provider';
import { storedMessage } from '../../src/runs/start-conversation';
import type { MessageRow } from '../../src/store/conversation-store.service';
import type { RunRow } from '../../src/store/run-store.service';
import type { SessionRow } from '../../src/store/session-store.service';
import type { Toolset } from '../../src/tools/toolset';
import { eventually } from '../support/eventually';
import { startCore, type CoreApp } from '../support/core-app';
import type { ModelScript } from '../support/scripted-model';

/**
 * The loop's send (CallsAhead.send), on handles built here: the call sent with a run's start is
 * used only when it was sent with exactly the conversation the run holds, and under a limit only
 * when it was reserved with the start; otherwise it alone is stopped — not the run — and a call is
 * sent now.
 */
describe('the loop’s send: a call sent with the start is used only for exactly the stored conversation', () => {
  let core: CoreApp;
  let ahead: CallsAhead;
  const signals: AbortSignal[] = [];
  const watch: ModelScript = (_request, signal) => {
    signals.push(signal);
    return (async function* () {})();
  };

  beforeAll(async () => {
    core = await startCore();
    ahead = core.module.get(CallsAhead);
  });
  afterAll(() => core.close());
  beforeEach(() => {
    core.model.reset();
    signals.length = 0;
  });

  const message = (seq: number, content: string): MessageRow =>
    storedMessage({ id: randomUUID(), content }, seq === 1 ? 'system' : 'user', seq, null, new Date());

  /** A run holding `conversation`, whose first call went out with `sentWith`. */
  function handle(
    conversation: MessageRow[],
    sentWith: readonly MessageRow[],
    session: Partial<SessionRow> = {},
  ): { h: RunHandle; first: FirstCall } {
    const controller = new AbortController();
    const stop = new AbortController();
    const request = { model: 'openai/gpt-4.1-mini', messages: [] } as unknown as ModelRequest;
    const call = new SentModelCall(core.model, request, AbortSignal.any([controller.signal, stop.signal]));
    const first: FirstCall = { call, conversation: sentWith, stop, controller };
    const h = new RunHandle({
      run: {
        id: randomUUID(),
        sessionId: randomUUID(),
        owner: 'tester',
        endUser: null,
        model: 'openai/gpt-4.1-mini',
        iterations: 0,
        maxIterations: 5,
        responseFormat: null,
        replay: null,
      } as unknown as RunRow,
      session: {
        maxTokens: null,
        maxCostUsd: null,
        endUser: null,
        reasoning: null,
        ...session,
      } as SessionRow,
      sink: {} as RunEventSink,
      lease: {} as RunLease,
      toolset: { definitions: [] } as unknown as Toolset,
      conversation,
      callIds: new Set(),
      callCounts: new Map(),
      firstMessageSeq: 2,
      nextMessageSeq: 3,
      resumesStep: false,
      firstCall: first,
    });
    return { h, first };
  }

  it('hands over the call sent with exactly the conversation the run holds, once', async () => {
    core.model.enqueue(watch, watch);
    const conversation = [message(1, 'Be brief.'), message(2, 'hello')];
    const { h, first } = handle(
      conversation,
      conversation.map((m) => ({ ...m })),
    );
    expect(await ahead.send(h)).toBe(first.call);
    expect(await ahead.send(h)).not.toBe(first.call); // the next call is the run's own
    await eventually(() => core.model.requests.length === 2);
    expect(signals[0].aborted).toBe(false);
  });

  it('hands over a call reserved with the start under a limit: the loop reserves nothing more for it', async () => {
    core.model.enqueue(watch);
    const conversation = [message(1, 'Be brief.'), message(2, 'hello')];
    const { h, first } = handle(
      conversation,
      conversation.map((m) => ({ ...m })),
      { maxTokens: 10_000 },
    );
    first.reservedOutput = 300;
    expect(ahead.reservedFirst(h)).toBe(300);
    expect(await ahead.send(h, 300)).toBe(first.call);
    expect(ahead.reservedFirst(h)).toBeUndefined(); // taken: the next call is reserved by the loop
    expect(first.stop.signal.aborted).toBe(false);
  });

  it('leaves a call reserved with the start to be stopped once the run holds another conversation', () => {
    const sentWith = [message(1, 'Be brief.'), message(2, 'hello')];
    const { h, first } = handle([...sentWith, message(3, 'in between')], sentWith, { maxTokens: 10_000 });
    first.reservedOutput = 300;
    expect(ahead.reservedFirst(h)).toBeUndefined();
  });

  it.each([
    ['a message the call was not sent with', (c: MessageRow[]) => [...c, message(3, 'in between')], {}],
    [
      'a message marked since (compacted)',
      (c: MessageRow[]) => [c[0], { ...c[1], context: 'pruned' as const }],
      {},
    ],
    ['a limit on the run (each call is reserved first)', (c: MessageRow[]) => c, { maxTokens: 10_000 }],
  ])('stops it alone, not the run, and sends one now: %s', async (_, held, session) => {
    core.model.enqueue(watch, watch);
    const sentWith = [message(1, 'Be brief.'), message(2, 'hello')];
    const { h, first } = handle(held(sentWith), sentWith, session);
    const sent = await ahead.send(h, 100);
    expect(sent).not.toBe(first.call);
    await eventually(() => core.model.requests.length === 2);
    expect(first.stop.signal.aborted).toBe(true);
    expect(signals[0].aborted).toBe(true);
    expect(h.signal.aborted).toBe(false);
    expect(signals[1].aborted).toBe(false);
    expect(core.model.requests[1]).toMatchObject({ maxOutputTokens: 100 });
  });
});
