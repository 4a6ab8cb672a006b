/**
 * The reasoning items of one answer, by output index, kept to go back unchanged with the next
 * request. What they may hold is bounded by the call's one bound on opaque state
 * (STREAM_LIMITS.providerDataMaxChars, counted by the ChunkNormalizer before an item is kept); a
 * cut call keeps none of them.
 */
export class ReasoningItems {
  private readonly items = new Map<number, unknown>();

  /** Keeps the item (a repeated index replaces it). */
  keep(index: number, item: unknown): void {
    this.items.set(index, item);
  }

  /** The items in output order. */
  list(): unknown[] {
    return [...this.items.entries()].sort(([a], [b]) => a - b).map(([, item]) => item);
  }
}
