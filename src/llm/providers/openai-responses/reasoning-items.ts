/**
 * What one call may keep of the reasoning items it must send back (`encrypted_content` and all),
 * measured as the event that brought each (its JSON, a little more than the item's), in UTF-16
 * code units. Real items are a few KB to some hundred KB: a whole call's reasoning is bounded by
 * its output tokens (128k at most today).
 */
export const REASONING_ITEM_LIMITS = {
  /** One item. */
  itemMaxChars: 1024 * 1024,
  /** All items of one call together (as much as STREAM_LIMITS lets its reasoning text hold). */
  callMaxChars: 4 * 1024 * 1024,
} as const;

/**
 * The reasoning items of one answer, by output index, kept to go back unchanged with the next
 * request — within REASONING_ITEM_LIMITS. An item past either limit is not kept, and the call is
 * `cut`: the provider closes the request and ends the answer as a limit does (`length`, no tool
 * calls) and keeps none of its items, so nothing past the bound is stored or sent back.
 */
export class ReasoningItems {
  private readonly items = new Map<number, unknown>();
  private charsLeft: number = REASONING_ITEM_LIMITS.callMaxChars;
  private crossed = false;

  /** Whether an item crossed a limit: nothing more is read, nothing is kept. */
  get cut(): boolean {
    return this.crossed;
  }

  /** Keeps the item, `chars` long, when it fits (a repeated index replaces the item but counts again). */
  keep(index: number, item: unknown, chars: number): void {
    if (this.crossed) return;
    if (chars > REASONING_ITEM_LIMITS.itemMaxChars || chars > this.charsLeft) {
      this.crossed = true;
      this.items.clear();
      return;
    }
    this.charsLeft -= chars;
    this.items.set(index, item);
  }

  /** The items in output order; none once cut. */
  list(): unknown[] {
    return [...this.items.entries()].sort(([a], [b]) => a - b).map(([, item]) => item);
  }
}
