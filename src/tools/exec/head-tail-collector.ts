import { utf8Head, utf8Tail } from '../output-cap';

/**
 * Keeps the first and the last bytes of an output of any length in bounded memory: a command that
 * prints gigabytes costs no more than what the model will be shown.
 */
export class HeadTailCollector {
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  private totalBytes = 0;

  constructor(
    private readonly headMax: number,
    private readonly tailMax: number,
  ) {}

  push(data: Buffer): void {
    this.totalBytes += data.length;
    const forHead = Math.min(data.length, this.headMax - this.headBytes);
    if (forHead > 0) {
      this.head.push(data.subarray(0, forHead));
      this.headBytes += forHead;
    }
    if (forHead === data.length) return;
    this.tail.push(data.subarray(forHead));
    this.tailBytes += data.length - forHead;
    while (this.tail.length > 1 && this.tailBytes - (this.tail[0]?.length ?? 0) >= this.tailMax) {
      this.tailBytes -= this.tail.shift()?.length ?? 0;
    }
  }

  get size(): number {
    return this.totalBytes;
  }

  /** Everything when it fit; otherwise the head, a marker with the sizes, and the tail. */
  text(): string {
    const head = Buffer.concat(this.head);
    const tail = Buffer.concat(this.tail);
    if (this.totalBytes <= this.headMax + this.tailMax) return Buffer.concat([head, tail]).toString('utf8');
    const keptHead = utf8Head(head, this.headMax);
    const keptTail = utf8Tail(tail, this.tailMax);
    const omitted = this.totalBytes - keptHead.length - keptTail.length;
    return `${keptHead.toString('utf8')}\n[truncated: ${omitted} of ${this.totalBytes} bytes omitted from the middle]\n${keptTail.toString('utf8')}`;
  }

  /**
   * The bytes kept, with where they sit in the whole output: `head` is its first bytes, `tail` its
   * last ones from byte `tailStart` (anything between `head.length` and `tailStart` was dropped).
   */
  kept(): { head: Buffer; tail: Buffer; tailStart: number; total: number } {
    const head = Buffer.concat(this.head);
    const tail = Buffer.concat(this.tail);
    return { head, tail, tailStart: this.totalBytes - tail.length, total: this.totalBytes };
  }

  get truncated(): boolean {
    return this.totalBytes > this.headMax + this.tailMax;
  }
}
