/**
 * Work that would all land in one turn of the event loop, spread over the next ones: `add` an item
 * and `take` is called with it in a coming turn, at most `perTurn` items a turn, in the order they
 * were added (an item added again before its turn keeps its place). A turn's length is what every
 * timer, request and socket of the process waits behind, so bounding what one turn takes on bounds
 * that wait. `take` must not throw: it runs from `setImmediate`, where a throw ends the process.
 */
export class Turns<T> {
  private readonly pending = new Set<T>();
  private scheduled = false;

  constructor(
    private readonly perTurn: number,
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
    const turn: T[] = [];
    for (const item of this.pending) {
      if (turn.length === this.perTurn) break;
      turn.push(item);
    }
    // Deleted first: an item added again while it is taken waits behind the others.
    for (const item of turn) this.pending.delete(item);
    for (const item of turn) this.take(item);
    if (this.pending.size > 0) setImmediate(this.drain);
    else this.scheduled = false;
  };
}

/**
 * Lets callers through a few a turn of the event loop, first come first served: work that sets off
 * a burst of more work (a run's start) is spread over turns instead of piling into one.
 */
export class TurnGate {
  private readonly turns: Turns<() => void>;

  constructor(perTurn: number) {
    this.turns = new Turns(perTurn, (pass) => pass());
  }

  /** Resolves in a coming turn, once the callers before it have passed. */
  pass(): Promise<void> {
    return new Promise((resolve) => this.turns.add(resolve));
  }
}
