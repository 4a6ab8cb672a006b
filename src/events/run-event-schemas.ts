import type { ReferenceObject, SchemaObject } from '@nestjs/swagger';
import type { RunEventType } from './run-events';

// The event stream's vocabulary (src/events/run-events.ts) as OpenAPI 3.0 schemas; the SSE `data:`
// line of each event is one of these. A new event type must be added here: SCHEMA_NAMES is typed by
// RunEventType, so the compiler points at this file.

const SCHEMA_NAMES: Readonly<Record<RunEventType, string>> = {
  run_started: 'RunStartedEvent',
  text: 'TextEvent',
  tool_call_start: 'ToolCallStartEvent',
  tool_approval_required: 'ToolApprovalRequiredEvent',
  tool_call_output: 'ToolCallOutputEvent',
  tool_call_result: 'ToolCallResultEvent',
  step_finished: 'StepFinishedEvent',
  context_compacted: 'ContextCompactedEvent',
  done: 'DoneEvent',
  error: 'ErrorEvent',
  run_resumed: 'RunResumedEvent',
  reasoning: 'ReasoningEvent',
  subagent_started: 'SubagentStartedEvent',
  subagent_finished: 'SubagentFinishedEvent',
  queued: 'QueuedEvent',
};

const ref = (name: string): ReferenceObject => ({ $ref: `#/components/schemas/${name}` });
const string = (description?: string): SchemaObject => ({
  type: 'string',
  ...(description ? { description } : {}),
});
const integer = (description?: string): SchemaObject => ({
  type: 'integer',
  ...(description ? { description } : {}),
});
const anyJson: SchemaObject = { description: 'Any JSON value' };

function event(
  type: RunEventType,
  description: string,
  fields: Record<string, SchemaObject | ReferenceObject>,
  optional: string[] = [],
): SchemaObject {
  return {
    type: 'object',
    description,
    required: ['type', 'runId', 'seq', ...Object.keys(fields).filter((f) => !optional.includes(f))],
    properties: {
      type: { type: 'string', enum: [type] },
      runId: { type: 'string', format: 'uuid' },
      seq: integer('1, 2, 3 … within the run; the same number as the SSE `id:` line'),
      ...fields,
    },
  };
}

const toolCallId = string('Unique within the run, never empty');

export const RUN_EVENT_SCHEMAS: Readonly<Record<string, SchemaObject>> = {
  Usage: {
    type: 'object',
    required: ['promptTokens', 'completionTokens', 'costUsd'],
    properties: {
      promptTokens: integer(),
      completionTokens: integer(),
      cacheReadTokens: integer('Prompt tokens read from the prompt cache, where reported'),
      cacheWriteTokens: integer('Prompt tokens written to the prompt cache, where reported'),
      reasoningTokens: integer('Completion tokens spent on reasoning, where reported'),
      estimated: {
        type: 'boolean',
        description:
          'Present (true) when some of it was estimated: a model call the provider did not report in full (cut by ANSWER_MAX_BYTES, cancelled, failed after it streamed, interrupted by a take-over)',
      },
      costUsd: {
        type: 'number',
        nullable: true,
        description: 'USD (MODEL_PRICES or the built-in price table); null when no model call had a price',
      },
    },
  },
  QueuedEvent: event(
    'queued',
    'First event (seq 1) of a run queued with onActive "enqueue" while its session was busy; run_started follows when it starts',
    { position: integer('1 is next') },
  ),
  RunStartedEvent: event('run_started', 'First event of every run (after queued for a queued one)', {
    sessionId: { type: 'string', format: 'uuid' },
    model: string(),
  }),
  TextEvent: event('text', "A piece of the assistant's answer, in order", { delta: string() }),
  ReasoningEvent: event('reasoning', "A piece of the model's visible reasoning (never part of the answer)", {
    delta: string(),
  }),
  ToolCallStartEvent: event('tool_call_start', 'The model asked for a tool and its arguments are complete', {
    toolCallId,
    name: string(),
    arguments: { ...anyJson, description: "The model's arguments, parsed, unchanged" },
    executor: { type: 'string', enum: ['server', 'client'] },
  }),
  ToolApprovalRequiredEvent: event('tool_approval_required', 'Policy says a person must approve this call', {
    toolCallId,
    name: string(),
    arguments: anyJson,
    reason: string(),
  }),
  ToolCallOutputEvent: event('tool_call_output', 'Live output of a long tool such as run_command', {
    toolCallId,
    stream: { type: 'string', enum: ['stdout', 'stderr'] },
    chunk: string(),
  }),
  ToolCallResultEvent: event(
    'tool_call_result',
    'A tool finished, failed, was rejected or timed out',
    {
      toolCallId,
      name: string(),
      content: string('As given to the model'),
      isError: { type: 'boolean' },
      durationMs: integer(),
      errorCode: string('Set on failure'),
      truncated: { type: 'boolean' },
    },
    ['errorCode', 'truncated'],
  ),
  StepFinishedEvent: event(
    'step_finished',
    'One model call is over',
    {
      iteration: integer('1, 2, …'),
      finishReason: string("The upstream's finish_reason as received (stop, tool_calls, length …)"),
      usage: ref('Usage'),
      model: string('The provider/model that answered (a fallback when one did)'),
    },
    ['model'],
  ),
  ContextCompactedEvent: event(
    'context_compacted',
    'Older context was pruned or summarized before the model call that follows ("Long sessions")',
    {
      summarizedMessages: integer('Messages a new summary stands in for (marked `summarized`)'),
      prunedMessages: integer('Tool results the model now gets as a stub (marked `pruned`)'),
      tokensBefore: integer("The request's tokens before, as counted for the model"),
      tokensAfter: integer("The request's tokens after"),
    },
  ),
  DoneEvent: event(
    'done',
    'Last event of a run that ended normally',
    {
      sessionId: { type: 'string', format: 'uuid' },
      status: { type: 'string', enum: ['completed', 'max_iterations', 'cancelled', 'budget_exceeded'] },
      iterations: integer(),
      usage: ref('Usage'),
      messageId: { type: 'string', nullable: true, description: 'The stored final assistant message' },
      output: { ...anyJson, description: "The final answer's parsed value, with a responseFormat" },
    },
    ['output'],
  ),
  ErrorEvent: event('error', 'Last event of a run that failed', {
    code: string(),
    message: string(),
    retryable: { type: 'boolean', description: 'True for upstream 429, 5xx and network failures' },
  }),
  RunResumedEvent: event(
    'run_resumed',
    'The run was taken over by a process after its own one died or shut down',
    {
      reason: { type: 'string', enum: ['process_lost', 'shutdown'] },
      iteration: integer('The number the next step will have (the interrupted step counts)'),
    },
  ),
  SubagentStartedEvent: event(
    'subagent_started',
    'A delegate call\'s child run started; the child\'s events come after it ("Agents and delegation")',
    {
      toolCallId,
      agent: string('The named agent'),
      childRunId: { type: 'string', format: 'uuid' },
      childSessionId: { type: 'string', format: 'uuid' },
    },
  ),
  SubagentFinishedEvent: event(
    'subagent_finished',
    "A delegate call's child run ended; the call's tool_call_result follows",
    {
      toolCallId,
      agent: string('The named agent'),
      childRunId: { type: 'string', format: 'uuid' },
      childSessionId: { type: 'string', format: 'uuid' },
      status: string("The child run's status"),
      usage: ref('Usage'),
    },
  ),
  RunEvent: {
    description:
      'The JSON of an event stream `data:` line; the SSE `event:` line carries the same `type`. Clients ignore types they do not know.',
    oneOf: Object.values(SCHEMA_NAMES).map(ref),
    discriminator: {
      propertyName: 'type',
      mapping: Object.fromEntries(
        Object.entries(SCHEMA_NAMES).map(([type, name]) => [type, `#/components/schemas/${name}`]),
      ),
    },
  },
  ErrorResponse: {
    type: 'object',
    description: 'Every error answer; extra fields (such as runId) may sit beside these three',
    required: ['statusCode', 'message', 'error'],
    properties: {
      statusCode: integer(),
      message: { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
      error: string(),
      runId: { type: 'string', format: 'uuid', description: 'With 409 and 422: the run in the way' },
      code: {
        type: 'string',
        enum: ['BUDGET_EXCEEDED'],
        description: "With 429: BUDGET_EXCEEDED when the key's budget in the current window is spent",
      },
    },
    additionalProperties: true,
  },
};

export const RUN_EVENT_SCHEMA = 'RunEvent';
