/**
 * A run as the page shows it, built from its event stream (API.md, "The event stream"): the answer's
 * text and tool calls in order, each call's state, and the steps for the timeline. Pure functions of
 * the events, so a replay and a live stream build the same view.
 */

export interface RunEvent {
  type: string;
  seq: number;
  [field: string]: unknown;
}

/** An event and when this page received it (for model call durations of runs it followed live). */
export interface ReceivedEvent {
  event: RunEvent;
  at: number;
}

export type RunStatus =
  | 'queued'
  | 'running'
  | 'requires_action'
  | 'completed'
  | 'max_iterations'
  | 'cancelled'
  | 'budget_exceeded'
  | 'failed';

export interface ToolCallView {
  id: string;
  name: string;
  arguments: unknown;
  executor: 'server' | 'client';
  /** Why the server asks a person (e.g. the diff of a write); null when the call needed no approval. */
  approvalReason: string | null;
  output: string;
  result: { content: string; isError: boolean; errorCode?: string; durationMs?: number } | null;
  /** The arguments a person approved the call with instead of the model's, once its result says so. */
  editedArguments?: unknown;
}

/** How the server's tool result begins when a person edited the call's arguments (agent/tool-steps.service.ts). */
const EDITED_PREFIX = '[A person edited the arguments of this call before approving it; it ran with ';

/** The arguments a call ran with when a person edited them, read from its result; undefined when not edited. */
export function editedArgumentsIn(content: string): unknown {
  if (!content.startsWith(EDITED_PREFIX)) return undefined;
  // JSON.stringify writes no raw line break, so the first "]" + line break ends the arguments.
  const end = content.indexOf(']\n', EDITED_PREFIX.length);
  try {
    return JSON.parse(content.slice(EDITED_PREFIX.length, end === -1 ? undefined : end)) as unknown;
  } catch {
    return undefined;
  }
}

export type Segment = { kind: 'text'; text: string } | { kind: 'tool'; id: string };

export interface RunView {
  runId: string;
  model: string | null;
  segments: Segment[];
  calls: Record<string, ToolCallView>;
  status: RunStatus;
  error: { code: string; message: string } | null;
  /** `done`'s usage: tokens, and the run's cost in USD (null for models without a price). */
  usage: { promptTokens: number; completionTokens: number; costUsd?: number | null } | null;
  /** `done.output`: the final answer's parsed value, with a responseFormat ("Structured output"). */
  output?: unknown;
  lastSeq: number;
  events: ReceivedEvent[];
  /** Followed from its start by this page: arrival times measure its model calls. */
  live: boolean;
  /**
   * Runs below this one (its delegate calls' child runs and theirs), by run id, built from their
   * events in this run's stream ("Agents and delegation"); `delegations` maps a delegate call to its child.
   */
  children: Record<string, RunView>;
  delegations: Record<string, string>;
  /** While it waits for its session's run (`queued`): its place in the queue, 1 next. */
  queuedPosition: number | null;
}

export function newRun(runId: string, live: boolean): RunView {
  return {
    runId,
    model: null,
    segments: [],
    calls: {},
    status: 'running',
    error: null,
    usage: null,
    lastSeq: 0,
    events: [],
    live,
    children: {},
    delegations: {},
    queuedPosition: null,
  };
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The view after one more event; an event already seen changes nothing. */
export function applyEvent(view: RunView, event: RunEvent, at: number): RunView {
  if (event.seq <= view.lastSeq) return view;
  const next: RunView = { ...view, lastSeq: event.seq, events: [...view.events, { event, at }] };
  const id = str(event.toolCallId);
  const runId = str(event.runId);
  if (runId !== '' && runId !== view.runId) {
    // A run below this one: its own view; its approval is this run's wait as well.
    const below = view.children[runId] ?? newRun(runId, view.live);
    const child = applyEvent({ ...below, children: {} }, event, at);
    next.children = { ...view.children, [runId]: { ...child, children: {} } };
    if (event.type === 'tool_approval_required') next.status = 'requires_action';
    return next;
  }
  switch (event.type) {
    case 'subagent_started':
    case 'subagent_finished': {
      const childRunId = str(event.childRunId);
      if (event.type === 'subagent_finished' && next.children[childRunId]) {
        next.children = {
          ...next.children,
          [childRunId]: { ...next.children[childRunId], status: str(event.status) as RunStatus },
        };
      }
      next.delegations = { ...next.delegations, [id]: childRunId };
      break;
    }
    case 'queued':
      next.status = 'queued';
      next.queuedPosition = typeof event.position === 'number' ? event.position : null;
      break;
    case 'run_started':
      next.model = str(event.model) || null;
      if (next.status === 'queued') next.status = 'running';
      next.queuedPosition = null;
      break;
    case 'text': {
      const last = next.segments.at(-1);
      next.segments =
        last?.kind === 'text'
          ? [...next.segments.slice(0, -1), { kind: 'text', text: last.text + str(event.delta) }]
          : [...next.segments, { kind: 'text', text: str(event.delta) }];
      break;
    }
    case 'tool_call_start':
      next.segments = [...next.segments, { kind: 'tool', id }];
      next.calls = {
        ...next.calls,
        [id]: {
          id,
          name: str(event.name),
          arguments: event.arguments,
          executor: event.executor === 'client' ? 'client' : 'server',
          approvalReason: null,
          output: '',
          result: null,
        },
      };
      if (event.executor === 'client') next.status = 'requires_action';
      break;
    case 'tool_approval_required':
      if (next.calls[id])
        next.calls = { ...next.calls, [id]: { ...next.calls[id], approvalReason: str(event.reason) } };
      next.status = 'requires_action';
      break;
    case 'tool_call_output':
      if (next.calls[id]) {
        next.calls = {
          ...next.calls,
          [id]: { ...next.calls[id], output: next.calls[id].output + str(event.chunk) },
        };
      }
      break;
    case 'tool_call_result':
      if (next.calls[id]) {
        next.calls = {
          ...next.calls,
          [id]: {
            ...next.calls[id],
            editedArguments: editedArgumentsIn(str(event.content)),
            result: {
              content: str(event.content),
              isError: event.isError === true,
              ...(typeof event.errorCode === 'string' ? { errorCode: event.errorCode } : {}),
              ...(typeof event.durationMs === 'number' ? { durationMs: event.durationMs } : {}),
            },
          },
        };
      }
      if (next.status === 'requires_action' && pendingCalls(next).length === 0) next.status = 'running';
      break;
    case 'done':
      next.status = (str(event.status) || 'completed') as RunStatus;
      next.usage = (event.usage as RunView['usage']) ?? null;
      if (event.output !== undefined) next.output = event.output;
      break;
    case 'error':
      next.status = 'failed';
      next.error = { code: str(event.code), message: str(event.message) };
      break;
  }
  return next;
}

/** Calls that wait for a person or for this page (no result yet, and the run waits). */
export function pendingCalls(view: RunView): ToolCallView[] {
  return Object.values(view.calls).filter(
    (c) => c.result === null && (c.approvalReason !== null || c.executor === 'client'),
  );
}

export function isActive(view: RunView): boolean {
  return view.status === 'running' || view.status === 'requires_action';
}

/** Not ended yet: active, or queued behind its session's active run. */
export function isPending(view: RunView): boolean {
  return isActive(view) || view.status === 'queued';
}

export interface StepView {
  iteration: number;
  finishReason: string | null;
  tokens: { prompt: number; completion: number } | null;
  /** How long the model call took, as this page saw it; null when the run was replayed. */
  durationMs: number | null;
  tools: {
    id: string;
    name: string;
    status: 'ok' | 'error' | 'rejected' | 'waiting' | 'running';
    durationMs: number | null;
  }[];
}

/** The run's steps: each model call (tokens, duration, why it stopped) with the tool calls it asked for. */
export function stepsOf(view: RunView): StepView[] {
  const steps: StepView[] = [];
  let current: StepView | null = null;
  let stepStartedAt: number | null = null;
  const open = (at: number): StepView => {
    if (current === null) {
      current = {
        iteration: steps.length + 1,
        finishReason: null,
        tokens: null,
        durationMs: null,
        tools: [],
      };
      steps.push(current);
      stepStartedAt ??= at;
    }
    return current;
  };
  const byCall = new Map<string, StepView>();
  for (const { event, at } of view.events) {
    switch (event.type) {
      case 'run_started':
        stepStartedAt = at;
        break;
      case 'text':
        open(at);
        break;
      case 'tool_call_start': {
        const step = open(at);
        step.tools.push({
          id: str(event.toolCallId),
          name: str(event.name),
          status: 'running',
          durationMs: null,
        });
        byCall.set(str(event.toolCallId), step);
        break;
      }
      case 'step_finished': {
        const step = open(at);
        const usage = event.usage as { promptTokens?: number; completionTokens?: number } | undefined;
        step.iteration = typeof event.iteration === 'number' ? event.iteration : step.iteration;
        step.finishReason = str(event.finishReason) || null;
        step.tokens = usage
          ? { prompt: usage.promptTokens ?? 0, completion: usage.completionTokens ?? 0 }
          : null;
        step.durationMs =
          view.live && stepStartedAt !== null ? Math.max(0, Math.round(at - stepStartedAt)) : null;
        current = null;
        stepStartedAt = at;
        break;
      }
      case 'tool_call_result':
        // The next model call starts once the step's calls have their results.
        stepStartedAt = at;
        break;
    }
  }
  for (const step of steps) {
    for (const tool of step.tools) {
      const call = view.calls[tool.id];
      if (call?.result) {
        tool.status =
          call.result.errorCode === 'REJECTED' ? 'rejected' : call.result.isError ? 'error' : 'ok';
        tool.durationMs = call.result.durationMs ?? null;
      } else if (call && (call.approvalReason !== null || call.executor === 'client')) {
        tool.status = isActive(view) ? 'waiting' : 'error';
      }
    }
  }
  return steps;
}

export function formatDuration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}
