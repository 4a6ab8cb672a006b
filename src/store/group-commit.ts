/** One item waiting for the next shared statement, and how its caller hears the answer. */
export interface Pending<T, R> {
  item: T;
  resolve: (answer: R) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit, the one way this process batches statements (EventAppendBatcher's text,
 * ReservationBatcher's reservations): while one statement is in flight the next items wait, then
 * leave as one. Items asked for by the code running now join the first statement; later ones, the
 * statement after it. At low load an item leaves at once, alone. `alone` and `together` answer
 * every item they are given.
 */
export abstract class GroupCommit<T, R> {
  private pending: Pending<T, R>[] = [];
  private inFlight = false;

  protected add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (!this.inFlight) {
        this.inFlight = true;
        queueMicrotask(() => void this.next());
      }
    });
  }

  /** One item's statement. */
  protected abstract alone(p: Pending<T, R>): Promise<void>;

  /** The statement of a batch of two or more. */
  protected abstract together(batch: Pending<T, R>[]): Promise<void>;

  private async next(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    try {
      if (batch.length === 1) await this.alone(batch[0]);
      else await this.together(batch);
    } finally {
      if (this.pending.length > 0) void this.next();
      else this.inFlight = false;
    }
  }
}
