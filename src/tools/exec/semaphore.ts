/** A counting semaphore whose waiters can give up through an AbortSignal (a cancelled run stops queueing). */
export class Semaphore {
  private available: number;
  private readonly waiters: (() => void)[] = [];

  constructor(capacity: number) {
    this.available = capacity;
  }

  /** Resolves with a release function once a slot is free; rejects with the signal's reason on abort. */
  async acquire(signal: AbortSignal): Promise<() => void> {
    signal.throwIfAborted();
    if (this.available > 0) {
      this.available--;
      return this.releaser();
    }
    await new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        const index = this.waiters.indexOf(grant);
        if (index !== -1) this.waiters.splice(index, 1);
        reject(signal.reason as Error);
      };
      const grant = (): void => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      this.waiters.push(grant);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    return this.releaser();
  }

  get waiting(): number {
    return this.waiters.length;
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      // The slot passes straight to the next waiter, so a newcomer cannot overtake the queue.
      if (next) next();
      else this.available++;
    };
  }
}
