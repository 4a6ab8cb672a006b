import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type TextMapGetter,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { ATTR_ERROR_TYPE, ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import type { TracingConfig } from '../config/team-config';

/** A finished model call, as its `chat` span records it. */
export interface TracedModelCall {
  provider: string;
  requestModel: string;
  responseModel: string;
  /** When the request went out (epoch ms). */
  startedAt: number;
  finishReason?: string;
  inputTokens?: number;
  outputTokens?: number;
  /** The answer (text and tool calls), recorded only when content capture is on. */
  output?: () => unknown;
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
 * One stretch of driving a run, as a trace: the `invoke_agent` span and its children. Each method is
 * one named point of the loop; all of them cost nothing when tracing is off.
 */
export interface RunTrace {
  /** The W3C `traceparent` of this run span: stored on the run row by its start, so later stretches continue it. */
  readonly traceParent: string | null;
  /** For log lines (`trace_id`); null when tracing is off. */
  readonly traceId: string | null;
  modelCall(call: TracedModelCall): void;
  toolCall(call: TracedToolCall): void;
  /** The stretch ended: the run's status then (`requires_action` while it waits), an error for a failed run. */
  end(status: string, error?: string): void;
}

/** The longest an exit waits for the last spans to reach the collector. */
const SHUTDOWN_FLUSH_MS = 2000;

/** The trace of a run while tracing is off: every point does nothing. */
export const NO_TRACE: RunTrace = {
  traceParent: null,
  traceId: null,
  modelCall: () => undefined,
  toolCall: () => undefined,
  end: () => undefined,
};

const CARRIER: TextMapGetter<Record<string, string>> = {
  keys: (c) => Object.keys(c),
  get: (c, k) => c[k],
};

/**
 * Traces of runs with the OpenTelemetry SDK, following the GenAI semantic conventions. Started only
 * when an OTLP endpoint is configured; otherwise every trace is a no-op and no SDK object exists.
 * Spans leave through a batch processor (bounded queue, export timeout), so a slow or dead collector
 * never delays a run: spans are dropped, never waited for. The provider is this service's own (not
 * registered globally), so nothing else in the process is instrumented by accident.
 */
@Injectable()
export class RunTracing implements OnApplicationShutdown {
  private readonly logger = new Logger(RunTracing.name);
  private readonly provider: TracerProvider | null = null;
  private readonly tracer: Tracer | null = null;
  private readonly propagator = new W3CTraceContextPropagator();
  private readonly captureContent: boolean;

  constructor(@Inject(APP_CONFIG) config: Pick<AppConfig, 'tracing'>) {
    const t = config.tracing;
    this.captureContent = t?.captureContent ?? false;
    if (t === null) return;
    this.provider = new TracerProvider({
      resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: t.serviceName }),
      spanProcessors: [
        new BatchSpanProcessor({
          exporter: exporter(t),
          maxQueueSize: 4096,
          scheduledDelayMillis: 1000,
          exportTimeoutMillis: t.timeoutMs,
        }),
      ],
    });
    this.tracer = this.provider.getTracer('loopwright');
  }

  get enabled(): boolean {
    return this.tracer !== null;
  }

  /**
   * The trace of one stretch of driving a run. `parent`: the `traceparent` of the request that
   * started it, or the one stored on the run (a run driven again after a wait or a take-over goes on
   * in the same trace, under its first span).
   */
  startRun(run: { runId: string; sessionId: string; model: string }, parent?: string | null): RunTrace {
    if (this.tracer === null) return NO_TRACE;
    const parentContext = parent
      ? this.propagator.extract(ROOT_CONTEXT, { traceparent: parent }, CARRIER)
      : ROOT_CONTEXT;
    const span = this.tracer.startSpan(
      'invoke_agent',
      {
        kind: SpanKind.INTERNAL,
        attributes: {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.conversation.id': run.sessionId,
          'gen_ai.request.model': run.model,
          'loopwright.run.id': run.runId,
        },
      },
      parentContext,
    );
    return new SpanTrace(this.tracer, span, this.captureContent);
  }

  /**
   * The span of a call settled outside any drive (a client's result, a rejection, an expiry), in the
   * trace of its run (`traceParent`, as stored on the run): its span covers the wait.
   */
  settledCall(traceParent: string | null, call: TracedToolCall): void {
    if (this.tracer === null || traceParent === null) return;
    const parent = this.propagator.extract(ROOT_CONTEXT, { traceparent: traceParent }, CARRIER);
    toolSpan(this.tracer, parent, call, this.captureContent);
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.provider === null) return;
    // Sends what is queued; a dead collector holds the exit up for SHUTDOWN_FLUSH_MS at most.
    let timer: NodeJS.Timeout | undefined;
    const flushed = this.provider.shutdown().then(
      () => true,
      (err: unknown) => {
        this.logger.warn({ msg: `traces not flushed: ${err instanceof Error ? err.message : String(err)}` });
        return true;
      },
    );
    const late = new Promise<boolean>(
      (resolve) => (timer = setTimeout(() => resolve(false), SHUTDOWN_FLUSH_MS)),
    );
    if (!(await Promise.race([flushed, late])))
      this.logger.warn({ msg: 'traces not flushed: the collector did not answer' });
    clearTimeout(timer);
  }
}

class SpanTrace implements RunTrace {
  readonly traceParent: string;
  readonly traceId: string;
  private readonly context: Context;
  private ended = false;

  constructor(
    private readonly tracer: Tracer,
    private readonly span: Span,
    private readonly captureContent: boolean,
  ) {
    this.context = trace.setSpan(ROOT_CONTEXT, span);
    const { traceId, spanId, traceFlags } = span.spanContext();
    // W3C Trace Context, version 00: what the propagator reads back when the run is driven again.
    this.traceParent = `00-${traceId}-${spanId}-${traceFlags.toString(16).padStart(2, '0')}`;
    this.traceId = traceId;
  }

  modelCall(call: TracedModelCall): void {
    const span = this.tracer.startSpan(
      `chat ${call.requestModel}`,
      {
        kind: SpanKind.CLIENT,
        startTime: call.startedAt,
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': call.provider,
          'gen_ai.request.model': call.requestModel,
          'gen_ai.response.model': call.responseModel,
          ...(call.finishReason === undefined
            ? {}
            : { 'gen_ai.response.finish_reasons': [call.finishReason] }),
          ...(call.inputTokens === undefined ? {} : { 'gen_ai.usage.input_tokens': call.inputTokens }),
          ...(call.outputTokens === undefined ? {} : { 'gen_ai.usage.output_tokens': call.outputTokens }),
        },
      },
      this.context,
    );
    if (this.captureContent && call.output)
      span.setAttribute('gen_ai.output.messages', JSON.stringify(call.output()));
    if (call.error !== undefined) {
      span.setAttribute(ATTR_ERROR_TYPE, call.error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: call.error });
    }
    span.end();
  }

  toolCall(call: TracedToolCall): void {
    toolSpan(this.tracer, this.context, call, this.captureContent);
  }

  end(status: string, error?: string): void {
    // The first end counts: the loop ends a failed run's trace with its error code before the caller sees the outcome.
    if (this.ended) return;
    this.ended = true;
    this.span.setAttribute('loopwright.run.status', status);
    if (status === 'failed') {
      this.span.setAttribute(ATTR_ERROR_TYPE, error ?? 'failed');
      this.span.setStatus({ code: SpanStatusCode.ERROR, message: error ?? 'failed' });
    }
    this.span.end();
  }
}

function exporter(t: TracingConfig): OtlpJsonExporter | OtlpProtoExporter {
  const options = { url: t.tracesUrl, headers: { ...t.headers }, timeoutMillis: t.timeoutMs };
  return t.protocol === 'http/json' ? new OtlpJsonExporter(options) : new OtlpProtoExporter(options);
}

/** An `execute_tool` span under `parent`; one that waited for a person or the client starts when the wait did. */
function toolSpan(tracer: Tracer, parent: Context, call: TracedToolCall, captureContent: boolean): void {
  const span = tracer.startSpan(
    `execute_tool ${call.name}`,
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
    if (call.arguments) span.setAttribute('gen_ai.tool.call.arguments', call.arguments());
    if (call.result) span.setAttribute('gen_ai.tool.call.result', call.result());
  }
  if (call.isError) {
    span.setAttribute(ATTR_ERROR_TYPE, call.errorCode ?? 'tool_error');
    span.setStatus({ code: SpanStatusCode.ERROR, message: call.errorCode ?? 'tool_error' });
  }
  span.end();
}
