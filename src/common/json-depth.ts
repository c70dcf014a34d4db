/** API.md: JSON nested deeper than this (the top-level value is level 1) is VALIDATION_FAILED. */
export const MAX_JSON_DEPTH = 32;

/**
 * How deep a parsed JSON value nests, walked without recursion (the point is to refuse values
 * deep enough to overflow a recursive walker, such as class-transformer's), stopping early.
 */
export function exceedsDepth(value: unknown, max = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > max) return true;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}
