import { jsonNestingExceeds } from '../common/json-depth';

/**
 * The doom-loop key of a call: the same tool with the same arguments, whatever the key order.
 * Arguments nested deeper than JSON_MAX_DEPTH (refused as INVALID_ARGUMENTS anyway) are compared as
 * written, so the recursion below never goes deeper than that.
 */
export function callKey(name: string, rawArguments: string): string {
  let canonical = rawArguments.trim();
  if (!jsonNestingExceeds(canonical)) {
    try {
      canonical = JSON.stringify(sortKeys(JSON.parse(canonical)));
    } catch {
      // Broken JSON is compared as written.
    }
  }
  return `${name}\u0000${canonical}`;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}
