import { RandomIdGenerator, type IdGenerator } from '@opentelemetry/sdk-trace';

/**
 * The tracer's ids: random, except that a root span can be started in a trace that already exists
 * (`inTrace`) — a run's stretch that must not hang under a span that may never have been exported
 * (RunTracing.startRun). The SDK asks for a trace id only for a span without a parent, synchronously
 * inside startSpan, so the id set here is taken by exactly the span `start` begins.
 */
export class TraceIds implements IdGenerator {
  private readonly random = new RandomIdGenerator();
  private nextTraceId: string | undefined;

  inTrace<T>(traceId: string, start: () => T): T {
    this.nextTraceId = traceId;
    try {
      return start();
    } finally {
      this.nextTraceId = undefined;
    }
  }

  generateTraceId(): string {
    const id = this.nextTraceId ?? this.random.generateTraceId();
    this.nextTraceId = undefined;
    return id;
  }

  generateSpanId(): string {
    return this.random.generateSpanId();
  }
}
