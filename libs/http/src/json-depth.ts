/**
 * How deep a JSON body may nest. The deepest body any Tally route takes is 4 levels
 * (`{"requests":[{"selectors":{…}}]}`); 32 leaves room for any reasonable client while keeping every
 * walk over a parsed body (ours, class-transformer's, the validation pipe's) far from the stack limit.
 */
export const MAX_JSON_DEPTH = 32;

const OPEN_OBJECT = 0x7b; // {
const OPEN_ARRAY = 0x5b; // [
const CLOSE_OBJECT = 0x7d; // }
const CLOSE_ARRAY = 0x5d; // ]
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \

/**
 * Whether the JSON text nests deeper than `max` containers, decided on the raw text in one pass with
 * no recursion, before it is parsed: a 10,000-level body must never reach a recursive walk. Brackets
 * inside strings do not count. Malformed text is not judged here (the parser refuses it next).
 */
export function nestsDeeperThan(text: string, max: number): boolean {
  // Each level costs at least two characters ("[" and "]"): a short text cannot be too deep.
  if (text.length <= 2 * max) return false;
  // Nor can one with few opening brackets: counted by the engine's native search, ≈ 10× cheaper than
  // the walk below on a decision body, which then runs only for batches and hostile bodies.
  if (!hasMoreThan(text, '{', '[', max)) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > max) return true;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    }
  }
  return false;
}

/** Whether `a` and `b` occur more than `max` times in all (inside strings too: an overestimate). */
function hasMoreThan(text: string, a: string, b: string, max: number): boolean {
  let count = 0;
  for (let i = text.indexOf(a); i !== -1; i = text.indexOf(a, i + 1)) if (++count > max) return true;
  for (let i = text.indexOf(b); i !== -1; i = text.indexOf(b, i + 1)) if (++count > max) return true;
  return false;
}
