import { Ticks } from '../common/ticks';

/** What StreamWakes wakes: a sink whose streams have new events to read. */
export interface WakesStreams {
  wakeStreams(): void;
}

/**
 * The streams to wake after writes, of every sink of the process (one provider, EventsModule: the
 * event loop they share is one; DrivenRuns hands it to each sink it makes). A sink asks once per
 * tick of the event loop, so every event of one network read leaves in one socket write instead of
 * one each. One write of the event-append batcher stores the text of hundreds of runs at once;
 * woken in one tick, their streams would make hundreds of socket writes while nothing else runs.
 * Here they are woken `perTick` sinks a tick, so timers, model chunks and requests run in between;
 * a sink whose streams read on and publish again asks anew, behind the others.
 */
export class StreamWakes {
  private readonly queue: Ticks<WakesStreams>;

  constructor(perTick: number) {
    this.queue = new Ticks(perTick, (sink) => sink.wakeStreams());
  }

  /** `sink` stored events: its streams wake in a coming tick. */
  add(sink: WakesStreams): void {
    this.queue.add(sink);
  }
}
