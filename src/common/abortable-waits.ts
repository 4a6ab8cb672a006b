/**
 * The waits of one follower, one after another, each ended by its wake or by the follower's abort,
 * whichever comes first. The abort is listened to once for the follower's whole life rather than
 * once per wait: a stream waits after every write of its run, ten times a second, and a listener
 * added and removed each time is work and garbage multiplied by every open stream. `dispose` when
 * the follower ends.
 */
export class AbortableWaits {
  private resolve: (() => void) | null = null;

  constructor(private readonly signal: AbortSignal) {
    signal.addEventListener('abort', this.wake, { once: true });
  }

  /**
   * Resolves when the function given to `register` is called, or when the signal aborts (at once if
   * it already has). That function is the same for every wait, so a call that comes late ends the
   * wait of its moment instead: for a follower that looks again after every wait, a wake too many.
   */
  next(register: (wake: () => void) => void): Promise<void> {
    if (this.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      this.resolve = resolve;
      register(this.wake);
    });
  }

  dispose(): void {
    this.signal.removeEventListener('abort', this.wake);
    this.wake();
  }

  private readonly wake = (): void => {
    const resolve = this.resolve;
    this.resolve = null;
    resolve?.();
  };
}
