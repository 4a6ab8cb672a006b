/**
 * Work that would all land in one tick of the event loop, spread over the next ones: `add` an item
 * and `take` is called with it in a coming tick, at most `perTick` items a tick, in the order they
 * were added (an item added again before its tick keeps its place). A tick's length is what every
 * timer, request and socket of the process waits behind, so bounding what one tick takes on bounds
 * that wait. `take` must not throw: it runs from `setImmediate`, where a throw ends the process.
 */
export class Ticks<T> {
  private readonly pending = new Set<T>();
  private scheduled = false;

  constructor(
    private readonly perTick: number,
    private readonly take: (item: T) => void,
  ) {}

  add(item: T): void {
    this.pending.add(item);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.drain);
    }
  }

  has(item: T): boolean {
    return this.pending.has(item);
  }

  /** Takes `item` out of its place; true when it was waiting. */
  delete(item: T): boolean {
    return this.pending.delete(item);
  }

  private readonly drain = (): void => {
    const tick: T[] = [];
    for (const item of this.pending) {
      if (tick.length === this.perTick) break;
      tick.push(item);
    }
    // Deleted first: an item added again while it is taken waits behind the others.
    for (const item of tick) this.pending.delete(item);
    for (const item of tick) this.take(item);
    if (this.pending.size > 0) setImmediate(this.drain);
    else this.scheduled = false;
  };
}

/**
 * Lets callers through a few a tick of the event loop, first come first served: work that sets off
 * a burst of more work (a run's start) is spread over ticks instead of piling into one.
 */
export class TickGate {
  private readonly ticks: Ticks<() => void>;

  constructor(perTick: number) {
    this.ticks = new Ticks(perTick, (pass) => pass());
  }

  /** Resolves in a coming tick, once the callers before it have passed. */
  pass(): Promise<void> {
    return new Promise((resolve) => this.ticks.add(resolve));
  }
}
