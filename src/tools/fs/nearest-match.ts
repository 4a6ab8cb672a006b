export interface NearestMatch {
  /** 1-based, inclusive. */
  startLine: number;
  endLine: number;
  text: string;
  /** 0…1, bigram similarity between the window and the searched text. */
  similarity: number;
  /** The first line where the file differs from what was searched, to point the model at the typo. */
  firstDifference: { line: number; expected: string; found: string } | null;
}

/**
 * The window of lines in `haystack` most like `needle` (both LF text). Lines are first anchored by
 * whitespace-insensitive equality — the usual miss is indentation or one changed line — and only
 * if nothing anchors does it fall back to the line most similar to the needle's first line.
 */
export function findNearestMatch(haystack: string, needle: string): NearestMatch | null {
  const hay = haystack.split('\n');
  const wanted = needle.endsWith('\n') ? needle.slice(0, -1).split('\n') : needle.split('\n');
  if (haystack === '' || wanted.length === 0) return null;
  const width = Math.min(wanted.length, hay.length);
  const start = anchoredStart(hay, wanted, width) ?? similarStart(hay, wanted, width);
  const window = hay.slice(start, start + width);
  return {
    startLine: start + 1,
    endLine: start + width,
    text: window.join('\n'),
    similarity: diceSimilarity(window.join('\n'), wanted.join('\n')),
    firstDifference: firstDifference(window, wanted, start),
  };
}

function normalise(line: string): string {
  return line.trim().replace(/\s+/g, ' ');
}

function anchoredStart(hay: readonly string[], wanted: readonly string[], width: number): number | null {
  const positions = new Map<string, number[]>();
  hay.forEach((line, index) => {
    const key = normalise(line);
    if (key === '') return;
    const list = positions.get(key);
    if (list) list.push(index);
    else positions.set(key, [index]);
  });
  const votes = new Map<number, number>();
  wanted.forEach((line, offset) => {
    for (const index of positions.get(normalise(line)) ?? []) {
      const start = index - offset;
      if (start >= 0 && start + width <= hay.length) votes.set(start, (votes.get(start) ?? 0) + 1);
    }
  });
  let best: number | null = null;
  let bestVotes = 0;
  for (const [start, count] of votes) {
    if (count > bestVotes || (count === bestVotes && best !== null && start < best)) {
      best = start;
      bestVotes = count;
    }
  }
  return best;
}

function similarStart(hay: readonly string[], wanted: readonly string[], width: number): number {
  const offset = Math.max(
    0,
    wanted.findIndex((line) => line.trim() !== ''),
  );
  const probe = wanted[offset] ?? '';
  let best = 0;
  let bestScore = -1;
  hay.forEach((line, index) => {
    const score = diceSimilarity(line, probe);
    if (score > bestScore) {
      bestScore = score;
      best = index;
    }
  });
  return Math.min(Math.max(0, best - offset), hay.length - width);
}

function firstDifference(
  window: readonly string[],
  wanted: readonly string[],
  start: number,
): NearestMatch['firstDifference'] {
  for (let i = 0; i < wanted.length; i++) {
    const found = window[i];
    if (found !== wanted[i]) {
      return { line: start + i + 1, expected: wanted[i] ?? '', found: found ?? '(end of file)' };
    }
  }
  return null;
}

/** Sørensen–Dice over character bigrams: cheap, and forgiving of small edits anywhere in a line. */
export function diceSimilarity(a: string, b: string): number {
  if (a === b) return 1;
  if (a.length < 2 || b.length < 2) return 0;
  const counts = new Map<string, number>();
  for (let i = 0; i < a.length - 1; i++) {
    const pair = a.slice(i, i + 2);
    counts.set(pair, (counts.get(pair) ?? 0) + 1);
  }
  let shared = 0;
  for (let i = 0; i < b.length - 1; i++) {
    const pair = b.slice(i, i + 2);
    const left = counts.get(pair) ?? 0;
    if (left > 0) {
      counts.set(pair, left - 1);
      shared++;
    }
  }
  return (2 * shared) / (a.length - 1 + (b.length - 1));
}
