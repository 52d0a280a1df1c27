import { type ValidationError } from 'class-validator';
import { parseDocument } from 'yaml';

/** One problem in a configuration file (the policy file, the tokens file), with where it is. */
export interface FileProblem {
  readonly path: string;
  readonly message: string;
}

/**
 * A configuration file's YAML, or every syntax error in it. Keys must be unique (a repeated key would
 * silently win); the error messages keep their first line only: prettyErrors appends a source
 * excerpt, which could show a secret pasted by mistake, and the path already says where.
 */
export function parseYamlFile(
  text: string,
  maxAliasCount: number,
): { ok: true; value: unknown } | { ok: false; errors: FileProblem[] } {
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: true });
  if (doc.errors.length > 0) {
    return {
      ok: false,
      errors: doc.errors.map((e) => ({
        path: e.linePos ? `line ${e.linePos[0].line}, column ${e.linePos[0].col}` : '(yaml)',
        message: `YAML: ${e.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')}`,
      })),
    };
  }
  if (doc.contents === null) return { ok: false, errors: [{ path: '(root)', message: 'the file is empty' }] };
  try {
    return { ok: true, value: doc.toJS({ maxAliasCount }) };
  } catch (e) {
    return { ok: false, errors: [{ path: '(yaml)', message: `YAML: ${(e as Error).message}` }] };
  }
}

/** class-validator's error tree as flat problems with paths like `policies[2].windows[0].limit`. */
export function flattenValidationErrors(
  errors: readonly ValidationError[],
  parent = '',
  parentIsList = false,
): FileProblem[] {
  return errors.flatMap((e) => {
    const path = parentIsList ? `${parent}[${e.property}]` : parent ? `${parent}.${e.property}` : e.property;
    const own = Object.entries(e.constraints ?? {}).map(([name, message]) => ({
      path,
      message: name === 'whitelistValidation' ? 'unknown field' : message,
    }));
    return [...own, ...flattenValidationErrors(e.children ?? [], path, Array.isArray(e.value))];
  });
}

/** Each entry's problems together, in file order (`<list>[i]…`); within an entry, in the order found. */
export function sortByEntry<T extends FileProblem>(errors: readonly T[], list: string): T[] {
  const pattern = new RegExp(`^${list}\\[(\\d+)\\]`);
  const index = (e: T): number => Number(pattern.exec(e.path)?.[1] ?? -1);
  return errors
    .map((e, i) => ({ e, i }))
    .sort((a, b) => index(a.e) - index(b.e) || a.i - b.i)
    .map(({ e }) => e);
}
