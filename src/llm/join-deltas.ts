import type { ModelStreamEvent } from './model-provider';

/**
 * Joins, in place, each run of text deltas (and of reasoning deltas) that one read of the body
 * brought: the loop then takes one event where the upstream sent several chunks. Nothing is lost —
 * the run's streams see the text of a write as one event anyway (RunEventSink).
 */
export function joinDeltas(events: ModelStreamEvent[]): void {
  let kept = 0;
  for (let i = 0; i < events.length; i++) {
    const event = events[i];
    const last = kept > 0 ? events[kept - 1] : undefined;
    if (
      last !== undefined &&
      (event.type === 'text' || event.type === 'reasoning') &&
      last.type === event.type
    ) {
      events[kept - 1] = { type: event.type, delta: last.delta + event.delta };
    } else {
      events[kept++] = event;
    }
  }
  events.length = kept;
}
