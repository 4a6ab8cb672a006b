/**
 * A task asked for in bursts (a server's `list_changed` notices): at most one run in flight and one
 * pending. A request while a run is under way marks one more run, taken once the current one ends;
 * however many requests come meanwhile, they share it — and nothing is held per request.
 */
export class CoalescedTask {
  private running: Promise<void> | null = null;
  private pending = false;

  constructor(
    private readonly task: () => Promise<void>,
    /** Told of a failed run once, whoever asked for it. */
    private readonly onFailure: (err: unknown) => void,
  ) {}

  /** Settles once a run that started after this request has ended (rejecting with its failure). */
  request(): Promise<void> {
    if (this.running !== null) {
      this.pending = true;
      return this.running;
    }
    const running = this.drain().finally(() => {
      this.running = null;
    });
    running.catch(this.onFailure);
    this.running = running;
    return running;
  }

  private async drain(): Promise<void> {
    try {
      do {
        this.pending = false;
        await this.task();
      } while (this.pending);
    } finally {
      // A failed run ends the burst; the next request starts afresh.
      this.pending = false;
    }
  }
}
