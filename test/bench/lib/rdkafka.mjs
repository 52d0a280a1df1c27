// node-rdkafka from .local/rdkafka (scripts/rdkafka-install.sh), never from the tree's node_modules:
// librdkafka is a comparison, not a dependency, so `npm ci` and CI never need a compiler for it.
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './built.mjs';

export const RDKAFKA_DIR = join(ROOT, '.local/rdkafka/node_modules/node-rdkafka');

/** Why the module cannot be loaded, or undefined when it can. */
export function rdkafkaMissing() {
  return existsSync(join(RDKAFKA_DIR, 'package.json'))
    ? undefined
    : `${RDKAFKA_DIR} is missing: run scripts/rdkafka-install.sh`;
}

export function loadRdkafka() {
  const missing = rdkafkaMissing();
  if (missing) throw new Error(missing);
  return createRequire(import.meta.url)(RDKAFKA_DIR);
}
