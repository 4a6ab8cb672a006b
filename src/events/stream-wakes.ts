import { Ticks } from '../common/ticks';

/** What StreamWakes wakes: a sink whose streams have new events to read. */
export interface WakesStreams {
  wakeStreams(): void;
}

/** Sinks whose streams are woken in one tick of the event loop, at most; the rest wait for the next. */
const WAKES_PER_TICK = 64;

/**
 * The streams to wake after writes, of every sink of the process (one per process: the event loop
 * they share is one). A sink asks once per tick of the event loop, so every event of one network
 * read leaves in one socket write instead of one each. One write of the event-append batcher stores
 * the text of hundreds of runs at once; woken in one tick, their streams would make hundreds of
 * socket writes while nothing else runs. Here they are woken WAKES_PER_TICK sinks a tick, so timers,
 * model chunks and requests run in between; a sink whose streams read on and publish
 * again asks anew, behind the others.
 */
export const streamWakes = new Ticks<WakesStreams>(WAKES_PER_TICK, (sink) => sink.wakeStreams());
