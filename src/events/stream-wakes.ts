/** What StreamWakes wakes: a sink whose streams have new events to read. */
export interface WakesStreams {
  wakeStreams(): void;
}

/** Sinks whose streams are woken in one turn of the event loop, at most; the rest wait for the next. */
const WAKES_PER_TURN = 64;

/**
 * The streams to wake after writes, of every sink of the process. A sink asks once per turn of the
 * event loop, so every event of one network read leaves in one socket write instead of one each.
 * One write of the event-append batcher stores the text of hundreds of runs at once; woken in one
 * turn, their streams would make hundreds of socket writes while nothing else runs. Here they are
 * woken WAKES_PER_TURN sinks a turn, so timers, model chunks and requests get their turn in between.
 */
class StreamWakes {
  /** In the order they asked; a sink asking again before it was woken keeps its place. */
  private readonly pending = new Set<WakesStreams>();
  private scheduled = false;

  add(sink: WakesStreams): void {
    this.pending.add(sink);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.drain());
    }
  }

  private drain(): void {
    const turn: WakesStreams[] = [];
    for (const sink of this.pending) {
      if (turn.length === WAKES_PER_TURN) break;
      turn.push(sink);
    }
    // Deleted first: a sink whose streams read on and publish again asks anew, behind the others.
    for (const sink of turn) this.pending.delete(sink);
    for (const sink of turn) sink.wakeStreams();
    if (this.pending.size > 0) setImmediate(() => this.drain());
    else this.scheduled = false;
  }
}

/** One per process: the event loop they share is one. */
export const streamWakes = new StreamWakes();
