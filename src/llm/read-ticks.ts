import type { Socket } from 'node:net';
import { Ticks } from '../common/ticks';

/** Model answers' sockets read in one tick of the event loop, at most; the rest wait for the next. */
const READS_PER_TICK = 8;

/**
 * What of a socket's native handle this drives: net.Socket starts and stops its reads through the
 * same two calls, and keeps `reading` true while it wants to read. Not a public API of Node, so
 * anything without it is left alone (read as Node reads it).
 */
interface ReadHandle {
  reading: boolean;
  readStart(): number;
  readStop(): number;
}

/**
 * The sockets of the model's answers, read in ticks. Node reads every socket with data waiting in
 * each tick of its event loop; with a thousand answers streaming, that is a thousand reads of a few
 * chunks each, and a tick took 34–45 ms (p50) while every timer, request and database answer of the
 * process waited behind it. Here a socket stops reading after a read (`hold`) and waits for its tick:
 * READS_PER_TICK sockets start reading again each tick, in the order they stopped. What the model
 * sends meanwhile waits in the kernel and is read in one go; if it waits long, TCP slows the model,
 * as it would slow it for a reader that cannot keep up. With a few answers streaming, every socket
 * reads again in the next tick, as before.
 *
 * The stop is the native handle's own `readStop` (what `socket.pause()` cannot do: it stops the
 * stream, while the socket goes on reading into its buffer and the HTTP parser asks it to resume).
 * net.Socket is left believing it reads: if it stops the socket itself (backpressure), `reading`
 * turns false and the socket's tick leaves it to Node to start again.
 */
export class ReadTicks {
  private readonly ticks: Ticks<Socket>;

  constructor(perTick: number) {
    this.ticks = new Ticks(perTick, (socket) => this.resume(socket));
  }

  /** After a read of `socket`: it reads nothing more until its tick comes (again a no-op until then). */
  hold(socket: Socket | null): void {
    if (socket === null || this.ticks.has(socket)) return;
    const handle = readHandle(socket);
    if (handle === null || !handle.reading) return;
    handle.readStop();
    this.ticks.add(socket);
  }

  /** Its answer is over: the socket reads again now (a kept-alive socket must see its next answer). */
  release(socket: Socket | null): void {
    if (socket !== null && this.ticks.delete(socket)) this.resume(socket);
  }

  private resume(socket: Socket): void {
    const handle = readHandle(socket);
    if (handle !== null && handle.reading) handle.readStart();
  }
}

function readHandle(socket: Socket): ReadHandle | null {
  if (socket.destroyed) return null;
  const handle = (socket as unknown as { _handle?: Partial<ReadHandle> | null })._handle;
  return handle != null &&
    typeof handle.readStop === 'function' &&
    typeof handle.readStart === 'function' &&
    typeof handle.reading === 'boolean'
    ? (handle as ReadHandle)
    : null;
}

/** One per process: the event loop the sockets share is one. */
export const modelReads = new ReadTicks(READS_PER_TICK);
