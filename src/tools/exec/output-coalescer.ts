import { StringDecoder } from 'node:string_decoder';

export interface CoalescerOptions {
  /** Longest a chunk waits before it is sent. */
  intervalMs: number;
  /** A buffer this large is sent at once. */
  maxBytes: number;
}

/**
 * Batches a stream's output into a few events a client can render (not one per byte) and decodes
 * UTF-8 across chunk boundaries, so a character split between two reads is never sent broken.
 */
export class OutputCoalescer {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';
  private pendingBytes = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly emit: (chunk: string) => void,
    private readonly options: CoalescerOptions,
  ) {}

  push(data: Buffer): void {
    this.pending += this.decoder.write(data);
    this.pendingBytes += data.length;
    if (this.pendingBytes >= this.options.maxBytes) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.options.intervalMs);
  }

  /** Sends what is buffered now. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const chunk = this.pending;
    this.pending = '';
    this.pendingBytes = 0;
    if (chunk !== '') this.emit(chunk);
  }

  /** Sends everything, including an incomplete character at the very end. */
  end(): void {
    this.pending += this.decoder.end();
    this.flush();
  }
}
