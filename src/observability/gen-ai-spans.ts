import { SpanKind, SpanStatusCode, type Attributes, type Context, type Tracer } from '@opentelemetry/api';
import { ATTR_ERROR_TYPE, ATTR_SERVER_ADDRESS, ATTR_SERVER_PORT } from '@opentelemetry/semantic-conventions';
import { SPAN_ATTRIBUTE_MAX_CHARS, SPAN_NAME_MAX_CHARS } from '../common/tuning';
import {
  cutAt,
  inputMessagesJson,
  outputMessagesJson,
  type TracedAnswer,
  type TracedMessage,
} from './gen-ai-messages';

export type { TracedAnswer, TracedMessage, TracedToolCallPart } from './gen-ai-messages';

/**
 * One model call (a run's step, or a summary's), as its `chat` span records it. Every model call
 * here is streamed (`gen_ai.request.stream` true).
 */
export interface TracedModelCall {
  /** The provider as the server names it (`openai`, `openai-responses`, `anthropic`, the prefix of its models). */
  provider: string;
  /** The model as its provider was sent it (without the `provider/` prefix). */
  requestModel: string;
  /** The model that answered, as its provider names it (a fallback's); the requested one when unsaid. */
  responseModel?: string;
  /** The upstream's id of the answer. */
  responseId?: string;
  /** The host and port the request went to. */
  server?: { address: string; port: number };
  /** The most output tokens the request allowed, as sent. */
  maxTokens?: number;
  /** When the request went out (epoch ms). */
  startedAt: number;
  finishReason?: string;
  usage?: {
    promptTokens: number;
    completionTokens: number;
    cacheReadTokens?: number;
    cacheWriteTokens?: number;
    reasoningTokens?: number;
  };
  /** Why the call was made, when not for a step of a run. */
  purpose?: 'summary';
  /** The messages sent; recorded only when content capture is on. */
  input?: () => readonly TracedMessage[];
  /** The answer; recorded only when content capture is on. */
  output?: () => TracedAnswer;
  /** The error code of a call that failed. */
  error?: string;
}

/** A tool call that has its result, as its `execute_tool` span records it. */
export interface TracedToolCall {
  name: string;
  callId: string;
  /** When the call ran (epoch ms): now minus its duration. */
  ranAt: number;
  /** When it began waiting for a person or the client (its record's time), if it waited. */
  waitedSince?: number;
  /** What it waited for, and how the wait ended (the span's event at `ranAt`). */
  waitedFor?: 'approval' | 'client';
  settledBy?: 'approved' | 'rejected' | 'client_result' | 'expired';
  isError: boolean;
  errorCode?: string | null;
  /** The arguments as the model wrote them (JSON text); recorded only when content capture is on. */
  arguments?: () => string;
  result?: () => string;
}

/**
 * `gen_ai.provider.name` of a provider the server names otherwise: the convention names the
 * company whose API it is (the Responses API is OpenAI's). Any other name is the convention's own.
 */
const CONVENTION_PROVIDER_NAMES = new Map([['openai-responses', 'openai']]);

export function conventionProviderName(provider: string): string {
  return CONVENTION_PROVIDER_NAMES.get(provider) ?? provider;
}

/** A span name of at most SPAN_NAME_MAX_CHARS (the SDK bounds attributes, not names). */
export function spanName(operation: string, subject: string): string {
  return cutAt(`${operation} ${subject}`, SPAN_NAME_MAX_CHARS);
}

/** A `chat` span under `parent` for a finished (or failed) model call. */
export function modelCallSpan(
  tracer: Tracer,
  parent: Context,
  call: TracedModelCall,
  captureContent: boolean,
): void {
  const usage = call.usage;
  const attributes: Attributes = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': conventionProviderName(call.provider),
    'gen_ai.request.model': call.requestModel,
    'gen_ai.request.stream': true,
    'gen_ai.response.model': call.responseModel ?? call.requestModel,
    'gen_ai.request.max_tokens': call.maxTokens,
    'gen_ai.response.id': call.responseId,
    'gen_ai.response.finish_reasons': call.finishReason === undefined ? undefined : [call.finishReason],
    'gen_ai.usage.input_tokens': usage?.promptTokens,
    'gen_ai.usage.output_tokens': usage?.completionTokens,
    'gen_ai.usage.cache_read.input_tokens': usage?.cacheReadTokens,
    'gen_ai.usage.cache_creation.input_tokens': usage?.cacheWriteTokens,
    'gen_ai.usage.reasoning.output_tokens': usage?.reasoningTokens,
    [ATTR_SERVER_ADDRESS]: call.server?.address,
    [ATTR_SERVER_PORT]: call.server?.port,
    'loopwright.model_call.purpose': call.purpose,
  };
  if (captureContent) {
    if (call.input)
      attributes['gen_ai.input.messages'] = inputMessagesJson(call.input(), SPAN_ATTRIBUTE_MAX_CHARS);
    if (call.output)
      attributes['gen_ai.output.messages'] = outputMessagesJson(
        call.output(),
        call.finishReason ?? (call.error === undefined ? 'stop' : 'error'),
        SPAN_ATTRIBUTE_MAX_CHARS,
      );
  }
  if (call.error !== undefined) attributes[ATTR_ERROR_TYPE] = call.error;
  const span = tracer.startSpan(
    spanName('chat', call.requestModel),
    { kind: SpanKind.CLIENT, startTime: call.startedAt, attributes: defined(attributes) },
    parent,
  );
  if (call.error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: call.error });
  span.end();
}

/** An `execute_tool` span under `parent`; one that waited for a person or the client starts when the wait did. */
export function toolSpan(
  tracer: Tracer,
  parent: Context,
  call: TracedToolCall,
  captureContent: boolean,
): void {
  const span = tracer.startSpan(
    spanName('execute_tool', call.name),
    {
      kind: SpanKind.INTERNAL,
      // A call that waited for a person or the client: its span covers the wait.
      startTime: call.waitedSince ?? call.ranAt,
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': call.name,
        'gen_ai.tool.call.id': call.callId,
        ...(call.waitedSince === undefined
          ? {}
          : {
              'loopwright.tool.waited_ms': Math.max(0, call.ranAt - call.waitedSince),
              'loopwright.tool.waited_for': call.waitedFor ?? 'approval',
            }),
      },
    },
    parent,
  );
  if (call.waitedSince !== undefined)
    span.addEvent(call.settledBy ?? (call.waitedFor === 'client' ? 'client_result' : 'approved'), call.ranAt);
  if (captureContent) {
    // Longer ones are cut by the SDK's attributeValueLengthLimit (SPAN_ATTRIBUTE_MAX_CHARS).
    if (call.arguments) span.setAttribute('gen_ai.tool.call.arguments', call.arguments());
    if (call.result) span.setAttribute('gen_ai.tool.call.result', call.result());
  }
  if (call.isError) {
    span.setAttribute(ATTR_ERROR_TYPE, call.errorCode ?? 'tool_error');
    span.setStatus({ code: SpanStatusCode.ERROR, message: call.errorCode ?? 'tool_error' });
  }
  span.end();
}

/** The attributes that have a value (the SDK would log a warning for each undefined one). */
function defined(attributes: Attributes): Attributes {
  const out: Attributes = {};
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) out[key] = value;
  return out;
}
