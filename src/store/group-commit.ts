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
 * every item they are given; the answers are heard once the next statement has left.
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

  /** No statement is in flight or waiting (a HeldConnection is given back). */
  protected idle(): void {}

  private async next(): Promise<void> {
    const answers: (() => void)[] = [];
    // Answered once the next batch has left (below): what a caller does on hearing its answer runs
    // after that statement is on its way, not before it — under load, milliseconds per batch.
    const batch = this.pending.map(({ item, resolve, reject }): Pending<T, R> => ({
      item,
      resolve: (answer) => answers.push(() => resolve(answer)),
      reject: (err) => answers.push(() => reject(err)),
    }));
    this.pending = [];
    try {
      if (batch.length === 1) await this.alone(batch[0]);
      else await this.together(batch);
    } finally {
      if (this.pending.length > 0) void this.next();
      else {
        this.inFlight = false;
        this.idle();
      }
      for (const answer of answers) answer();
    }
  }
}
