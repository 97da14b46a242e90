/**
 * "Did you mean": the known name closest to a mistyped one, by edit distance (Levenshtein: one
 * insertion, deletion or substitution each), ignoring case. Used for model and organization names, lists
 * of tens of entries, so the plain quadratic distance is cheap; a name is suggested only when it is
 * within a third of the typed name's length (at least one edit), so that unrelated names never are.
 */

/** Edit distance between `left` and `right` (two rows of the classic table). */
export function editDistance(left: string, right: string): number {
  let previous = Array.from({ length: right.length + 1 }, (_value, index) => index);
  for (let row = 1; row <= left.length; row++) {
    const current = [row];
    for (let column = 1; column <= right.length; column++) {
      const substitution = previous[column - 1]! + (left[row - 1] === right[column - 1] ? 0 : 1);
      current.push(Math.min(previous[column]! + 1, current[column - 1]! + 1, substitution));
    }
    previous = current;
  }
  return previous[right.length]!;
}

/** The candidate closest to `name` (ties: the first given), or undefined when none is close enough. */
export function closestName(name: string, candidates: Iterable<string>): string | undefined {
  const typed = name.toLowerCase();
  const limit = Math.max(1, Math.floor(typed.length / 3));
  let best: { name: string; distance: number } | undefined;
  for (const candidate of candidates) {
    if (candidate === name) continue;
    const distance = editDistance(typed, candidate.toLowerCase());
    if (distance <= limit && (best === undefined || distance < best.distance)) best = { name: candidate, distance };
  }
  return best?.name;
}

/** ` Did you mean 'x'?` for a message, or an empty string. */
export function didYouMean(name: string, candidates: Iterable<string>): string {
  const closest = closestName(name, candidates);
  return closest === undefined ? '' : ` Did you mean '${closest}'?`;
}
