import type { Usage } from './model-provider';
import type { ModelStreamWriter } from './model-stream-writer';

/**
 * One model call as a provider's dialect reader sees it (providers/<name>/): the shared writer
 * (storable text, the call's bounds, the finish's tool calls), the usage the upstream reported, and
 * what it said about its end. The ChunkNormalizer owns the call and hands this out.
 */
export interface StreamReading {
  readonly writer: ModelStreamWriter;
  /** What the upstream reported so far; the reader overwrites its fields. */
  readonly usage: Usage;
  /** The upstream's response id (the first sane one wins). */
  responseId(value: unknown): void;
  /** The upstream's reason for its end. */
  finishWith(reason: string): void;
  /** A clean end even without a reason (a reason already given stays). */
  finishIfUnset(): void;
}
