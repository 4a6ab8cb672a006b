import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Link,
  type Span,
  type SpanContext,
  type TextMapGetter,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { ATTR_ERROR_TYPE, ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import {
  SPAN_ATTRIBUTE_MAX_CHARS,
  SPAN_ATTRIBUTE_MAX_COUNT,
  SPAN_EVENT_MAX_COUNT,
  SPAN_QUEUE_MAX,
} from '../common/tuning';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import type { TracingConfig } from '../config/team-config';
import {
  conventionProviderName,
  modelCallSpan,
  toolSpan,
  type TracedModelCall,
  type TracedToolCall,
} from './gen-ai-spans';
import { TraceIds } from './trace-ids';

export type { TracedAnswer, TracedMessage, TracedModelCall, TracedToolCall } from './gen-ai-spans';

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
  private readonly ids = new TraceIds();
  private readonly captureContent: boolean;

  constructor(@Inject(APP_CONFIG) config: Pick<AppConfig, 'tracing'>) {
    const t = config.tracing;
    this.captureContent = t?.captureContent ?? false;
    if (t === null) return;
    this.provider = new TracerProvider({
      resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: t.serviceName }),
      idGenerator: this.ids,
      // Every name and attribute has a bound (names: spanName); see tuning.ts for the figures.
      spanLimits: {
        attributeValueLengthLimit: SPAN_ATTRIBUTE_MAX_CHARS,
        attributeCountLimit: SPAN_ATTRIBUTE_MAX_COUNT,
        eventCountLimit: SPAN_EVENT_MAX_COUNT,
        linkCountLimit: SPAN_EVENT_MAX_COUNT,
        attributePerEventCountLimit: SPAN_EVENT_MAX_COUNT,
        attributePerLinkCountLimit: SPAN_EVENT_MAX_COUNT,
      },
      spanProcessors: [
        new BatchSpanProcessor({
          exporter: exporter(t),
          maxQueueSize: SPAN_QUEUE_MAX,
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
   * The trace of one stretch of driving a run (`model`: as its provider is sent it, `provider` apart).
   * `parent`: the `traceparent` of the request that started it, or the one stored on the run — a
   * run driven again after a wait goes on in the same trace, under its first span.
   *
   * A run taken over (`takenOver`) goes on in the same trace too, but not under that span: the
   * process that drove it died or stopped, so its span may never have been exported, and a span
   * whose parent no collector has is shown detached ("missing parent") by trace viewers. The taken
   * over stretch is a root of the run's trace instead, linked to the span it continues: a viewer
   * shows the run's trace with each such stretch as a tree of its own on the same timeline, and its
   * link back to the first.
   */
  startRun(
    run: { runId: string; sessionId: string; provider: string; model: string; endUser?: string | null },
    parent?: string | null,
    takenOver = false,
  ): RunTrace {
    if (this.tracer === null) return NO_TRACE;
    const tracer = this.tracer;
    const parentContext = parent ? this.contextOf(parent) : ROOT_CONTEXT;
    const from = trace.getSpanContext(parentContext);
    const options = {
      kind: SpanKind.INTERNAL,
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.provider.name': conventionProviderName(run.provider),
        'gen_ai.conversation.id': run.sessionId,
        'gen_ai.request.model': run.model,
        'loopwright.run.id': run.runId,
        // Its session's end user (X-End-User), as OpenTelemetry's general attribute names one.
        ...(run.endUser ? { 'enduser.id': run.endUser } : {}),
      },
    };
    const span =
      takenOver && from
        ? this.ids.inTrace(from.traceId, () =>
            tracer.startSpan('invoke_agent', { ...options, links: [continues(from)] }, ROOT_CONTEXT),
          )
        : tracer.startSpan('invoke_agent', options, parentContext);
    return new SpanTrace(tracer, span, this.captureContent);
  }

  /**
   * What a model call outside any run (an on-demand summary) is traced by: its `chat` span, the root
   * of a trace of its own; nothing else of a run's trace applies.
   */
  outsideRun(): RunTrace {
    if (this.tracer === null) return NO_TRACE;
    return { ...NO_TRACE, modelCall: (call) => this.modelCall(call) };
  }

  /**
   * The span of a model call made outside any run (an on-demand summary): under `traceParent` (a
   * request's) when given, else the root of a trace of its own.
   */
  modelCall(call: TracedModelCall, traceParent?: string | null): void {
    if (this.tracer === null) return;
    modelCallSpan(
      this.tracer,
      traceParent ? this.contextOf(traceParent) : ROOT_CONTEXT,
      call,
      this.captureContent,
    );
  }

  /**
   * The span of a call settled outside any drive (a client's result, a rejection, an expiry), in the
   * trace of its run (`traceParent`, as stored on the run): its span covers the wait.
   */
  settledCall(traceParent: string | null, call: TracedToolCall): void {
    if (this.tracer === null || traceParent === null) return;
    toolSpan(this.tracer, this.contextOf(traceParent), call, this.captureContent);
  }

  private contextOf(traceParent: string): Context {
    return this.propagator.extract(ROOT_CONTEXT, { traceparent: traceParent }, CARRIER);
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
    modelCallSpan(this.tracer, this.context, call, this.captureContent);
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

/** The link of a taken-over stretch to the span it continues. */
function continues(from: SpanContext): Link {
  return { context: from, attributes: { 'loopwright.link': 'continues' } };
}

function exporter(t: TracingConfig): OtlpJsonExporter | OtlpProtoExporter {
  const options = { url: t.tracesUrl, headers: { ...t.headers }, timeoutMillis: t.timeoutMs };
  return t.protocol === 'http/json' ? new OtlpJsonExporter(options) : new OtlpProtoExporter(options);
}
