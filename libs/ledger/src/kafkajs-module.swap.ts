/**
 * The seam the kafkajs fixes that replace a whole module use (kafkajs-record.fix.ts,
 * kafkajs-crc.fix.ts): one module of kafkajs 2.2.4 (its last release), replaced in Node's module
 * cache before the kafkajs module that holds its export loads. kafkajs reads each of these exports
 * once, at `require` time (`const crc32C = require('../crc32C')`), so replacing the cache entry's
 * `exports` is enough, and is the only way in: there is no hook, and the function is not reachable
 * from any object a client exposes. Once the holder is loaded it keeps the original for the life
 * of the process; the swap then changes nothing and says so.
 *
 * kafkajs-idle-timer.fix.ts patches methods of a prototype instead: that works whenever it runs,
 * so it needs none of this.
 */
export interface KafkajsModuleSwap<T extends object> {
  /** The module replaced, as kafkajs requires it (`kafkajs/src/protocol/recordBatch/crc32C`). */
  readonly module: string;
  /** The kafkajs module that holds `module`'s export once loaded: after it, too late. */
  readonly heldBy: string;
  /** Marks the replacement, so a second call (or a second copy of this code) finds it in place. */
  readonly marker: symbol;
  /** The replacement, given kafkajs's original export. */
  readonly replace: (original: T) => T;
}

/**
 * Applied once per process, before kafkajs loads `heldBy` (createKafka applies every fix). True when
 * the replacement is in place (now or already); false when `heldBy` was loaded first: it holds the
 * original, and nothing is replaced.
 */
export function replaceKafkajsModule<T extends object>(swap: KafkajsModuleSwap<T>): boolean {
  // Deep imports of a pinned, unmaintained package: its files will not move under us.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const path = require.resolve(swap.module);
  const heldByPath = require.resolve(swap.heldBy);
  const original = require(path) as T;
  /* eslint-enable @typescript-eslint/no-require-imports */
  if (Reflect.get(original, swap.marker) === true) return true;
  const cached = require.cache[path];
  if (cached === undefined || require.cache[heldByPath] !== undefined) return false;
  const replacement = swap.replace(original);
  Reflect.set(replacement, swap.marker, true);
  cached.exports = replacement;
  return true;
}

/**
 * `module`'s export as kafkajs's file defines it, whatever Node's cache holds (a replacement once
 * the fixes ran), and the cache left as it was: what the fixes' specs compare their replacements with.
 */
export function originalKafkajsModule<T>(module: string): T {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const path = require.resolve(module);
  const cached = require.cache[path];
  delete require.cache[path];
  const original = require(path) as T;
  /* eslint-enable @typescript-eslint/no-require-imports */
  if (cached !== undefined) require.cache[path] = cached;
  return original;
}
