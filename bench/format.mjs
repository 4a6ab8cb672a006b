// The bench's plain-text output: numbers and tables (bench/run.mjs, bench/peers/compare.mjs).

/** `v` with `digits` decimals, or '–' when it was not measured. */
export const fmt = (v, digits = 1) => (Number.isFinite(v) ? v.toFixed(digits) : '–');

/** A plain-text table; the first `left` columns are left-aligned, the others right-aligned. */
export function table(headers, rows, left = 1) {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) =>
    cells.map((c, i) => (i < left ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ');
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}
