import { parseAllDocuments, stringify } from 'yaml';
import { ATTRIBUTE_NAME, valueProblem } from '@tally/policy';
import { KNOWN_UNITS, PolicyNames, UNITS, type Entry } from './envoy-import.names';

/**
 * `tally policy import-envoy`: an envoyproxy/ratelimit configuration (one YAML document per domain)
 * as a Tally policy file with the same behaviour under RLS's whole-descriptor matching
 * (docs/envoy.md, "Matching" and "Migrating from envoyproxy/ratelimit"). Pure: text in, text out.
 *
 * Each descriptor path with a `rate_limit` becomes one policy: the path's keys with a `value` go into
 * `match` (with `domain`), those without one (a counter per value) into `key`, whatever their names
 * (a selector dim keys by the selector, any other name by the attribute of that name): the counter
 * is the descriptor path, as ratelimit's cache key (`domain_key_value_…`). A wildcard value
 * `prefix*` goes into `match_prefix`, and into `key` too unless `share_threshold` makes every value
 * of the prefix share one counter. Envoy prefers an exact `key_value` node, then the first matching
 * wildcard, then the key-only sibling at the same level, so a wildcard rule is exempted (`unless`,
 * `unless_prefix`) from the exact values and earlier wildcards of its key, and a key-only rule (and
 * its subtree) from all of them.
 *
 * Longer than most files on purpose: one traversal, whose checks read in the order ratelimit applies
 * them, so each report names the exact rule or field it is about.
 */

/** Where in the input (`<domain>: descriptors[0].descriptors[1]`) and what. */
export interface EnvoyImportNote {
  readonly path: string;
  readonly message: string;
}

export interface EnvoyImportDraft {
  readonly name: string;
  readonly match: Record<string, string>;
  readonly unless?: Record<string, string[]>;
  readonly match_prefix?: Record<string, string[]>;
  readonly unless_prefix?: Record<string, string[]>;
  readonly key: string[];
  readonly mode?: 'shadow';
  readonly windows: {
    name: string;
    role: 'burst' | 'sustained';
    algorithm: 'fixed_window';
    limit: number;
    period: string;
  }[];
}

export type EnvoyImportResult =
  | { readonly ok: false; readonly errors: EnvoyImportNote[] }
  | {
      readonly ok: true;
      readonly policies: EnvoyImportDraft[];
      /** What changes behaviour or is dropped: the rule or field is not in the output. */
      readonly unmapped: EnvoyImportNote[];
      /** Mapped with no policy or no effect (e.g. `unlimited`), said so it is not a surprise. */
      readonly notes: EnvoyImportNote[];
      /** The policy file. */
      readonly yaml: string;
    };

const NODE_FIELDS = new Set([
  'key',
  'value',
  'rate_limit',
  'descriptors',
  'shadow_mode',
  'detailed_metric',
  'share_threshold',
  'value_to_metric',
  'quota_mode',
  'metadata',
]);

/** What exempts a rule from the descriptors a sibling claims first: values and prefixes of one key. */
interface Exemption {
  readonly key: string;
  readonly values: string[];
  readonly prefixes: string[];
}

/** A wildcard value: `prefix*`, the only `*` at the end (ratelimit also takes `*` mid-value). */
const prefixOf = (value: string): string | undefined =>
  value.endsWith('*') && value.indexOf('*') === value.length - 1 ? value.slice(0, -1) : undefined;
const RATE_LIMIT_FIELDS = new Set(['unit', 'requests_per_unit', 'unlimited', 'name', 'replaces']);

type Raw = Record<string, unknown>;

const isMapping = (v: unknown): v is Raw => typeof v === 'object' && v !== null && !Array.isArray(v);

class Walker {
  readonly policies: EnvoyImportDraft[] = [];
  readonly unmapped: EnvoyImportNote[] = [];
  readonly notes: EnvoyImportNote[] = [];
  readonly errors: EnvoyImportNote[] = [];
  private readonly names = new PolicyNames();

  domain(doc: unknown, where: string): void {
    if (!isMapping(doc))
      return void this.errors.push({
        path: where,
        message: 'must be a mapping with `domain` and `descriptors`',
      });
    const domain = doc.domain;
    if (typeof domain !== 'string' || domain.trim() === '')
      return void this.errors.push({ path: where, message: '`domain` must be a non-empty string' });
    const at = `${domain}:`;
    for (const field of Object.keys(doc))
      if (field !== 'domain' && field !== 'descriptors')
        this.unmapped.push({ path: at, message: `unknown field \`${field}\` ignored` });
    const problem = valueProblem(domain);
    if (problem)
      return void this.unmapped.push({ path: at, message: `domain ${problem}: nothing of it is mapped` });
    this.level(doc.descriptors, [], [], domain, `${at} descriptors`);
  }

  /** One list of sibling descriptors under the path `entries`; `exempt` = the exemptions inherited. */
  private level(raw: unknown, entries: Entry[], exempt: Exemption[], domain: string, path: string): void {
    if (raw === undefined) return;
    if (!Array.isArray(raw)) return void this.errors.push({ path, message: 'must be a list of descriptors' });
    const claims = new Map<string, { values: string[]; prefixes: string[] }>();
    const seen = new Set<string>();
    raw.forEach((node, i) => {
      if (!isMapping(node) || typeof node.key !== 'string') return;
      const id = JSON.stringify([node.key, node.value]);
      // ratelimit refuses the file too: two rules for one descriptor at one level.
      if (seen.has(id))
        this.errors.push({ path: `${path}[${i}]`, message: 'duplicates an earlier key/value of this level' });
      seen.add(id);
    });
    // What the exact and wildcard siblings of each key claim, in file order (wildcards are tried in it).
    for (const node of raw) {
      if (!isMapping(node) || typeof node.key !== 'string' || typeof node.value !== 'string') continue;
      const claim = claims.get(node.key) ?? { values: [], prefixes: [] };
      const prefix = prefixOf(node.value);
      if (prefix === undefined) claim.values.push(node.value);
      else claim.prefixes.push(prefix);
      claims.set(node.key, claim);
    }
    raw.forEach((node, i) => this.node(node, entries, exempt, claims, domain, `${path}[${i}]`));
  }

  private node(
    node: unknown,
    parents: Entry[],
    exempt: Exemption[],
    claims: ReadonlyMap<string, { values: string[]; prefixes: string[] }>,
    domain: string,
    path: string,
  ): void {
    if (!isMapping(node)) return void this.errors.push({ path, message: 'must be a mapping with `key`' });
    const { key, value } = node;
    if (typeof key !== 'string' || key === '')
      return void this.errors.push({ path, message: '`key` must be a non-empty string' });
    if (value !== undefined && typeof value !== 'string')
      return void this.errors.push({ path, message: '`value` must be a string' });
    const skip = (why: string) =>
      this.unmapped.push({ path, message: `${why}: this rule and the rules below it are not mapped` });
    for (const field of Object.keys(node))
      if (!NODE_FIELDS.has(field))
        this.unmapped.push({ path, message: `unknown field \`${field}\` ignored` });
    if (key === 'domain')
      return void skip('key `domain` is the request domain in Tally, not a descriptor entry');
    if (!ATTRIBUTE_NAME.test(key))
      return void skip(`key \`${key}\` is not a Tally attribute name ([a-z0-9_.-]{1,64})`);
    if (parents.some((p) => p.key === key))
      return void skip(`key \`${key}\` repeats an outer key (one value per name)`);
    const shared = node.share_threshold === true;
    if (node.share_threshold !== undefined && typeof node.share_threshold !== 'boolean')
      return void this.errors.push({ path: `${path}.share_threshold`, message: 'must be a boolean' });
    const prefix = value === undefined ? undefined : prefixOf(value);
    // ratelimit refuses the file too: a threshold can only be shared by the values of a wildcard.
    if (shared && prefix === undefined)
      return void this.errors.push({
        path: `${path}.share_threshold`,
        message: 'only applies to a wildcard value (`prefix*`)',
      });
    if (value !== undefined) {
      if (value.includes('*') && prefix === undefined)
        return void skip(`wildcard value \`${value}\` with \`*\` before its end: only \`prefix*\` is mapped`);
      if (key === 'token')
        return void skip('key `token` with a value: Tally hashes tokens, so a value never matches');
      const problem = valueProblem(prefix ?? value);
      if (problem) return void skip(prefix === '' ? 'wildcard value `*` (any value)' : `value ${problem}`);
    }
    const entry: Entry =
      value === undefined ? { key } : prefix === undefined ? { key, value } : { key, value, prefix, shared };
    const entries = [...parents, entry];
    // Envoy descends into the exact `key_value` sibling when there is one, else into the first wildcard
    // sibling that matches, else into the key-only one: a rule is not the descriptors a sibling claims first.
    const claim = claims.get(key);
    const prefixes = claim?.prefixes ?? [];
    const claimed: Exemption | undefined =
      value === undefined
        ? claim && { key, values: claim.values, prefixes }
        : prefix !== undefined
          ? { key, values: claim?.values ?? [], prefixes: prefixes.slice(0, prefixes.indexOf(prefix)) }
          : undefined;
    const claimsAny = claimed !== undefined && claimed.values.length + claimed.prefixes.length > 0;
    const exemptions = claimsAny ? [...exempt, claimed] : exempt;
    this.rule(node, entries, exemptions, domain, path);
    this.level(node.descriptors, entries, exemptions, domain, `${path}.descriptors`);
  }

  private rule(node: Raw, entries: Entry[], exempt: Exemption[], domain: string, path: string): void {
    if (node.detailed_metric !== undefined)
      this.notes.push({ path, message: '`detailed_metric` ignored: Tally labels its metrics by policy' });
    if (node.value_to_metric !== undefined)
      this.notes.push({ path, message: '`value_to_metric` ignored: Tally labels its metrics by policy' });
    if (node.quota_mode !== undefined)
      this.unmapped.push({
        path,
        message: '`quota_mode` not mapped: Tally has no quota mode; the rule is mapped as an enforced limit',
      });
    if (node.metadata !== undefined)
      this.unmapped.push({ path, message: '`metadata` not mapped: Tally returns no per-rule metadata' });
    if (node.rate_limit === undefined) return;
    const rl = node.rate_limit;
    const at = `${path}.rate_limit`;
    if (!isMapping(rl))
      return void this.errors.push({
        path: at,
        message: 'must be a mapping with `unit` and `requests_per_unit`',
      });
    for (const field of Object.keys(rl))
      if (!RATE_LIMIT_FIELDS.has(field))
        this.unmapped.push({ path: at, message: `unknown field \`${field}\` ignored` });
    if (rl.replaces !== undefined)
      this.unmapped.push({
        path: at,
        message: '`replaces` not mapped: Tally applies every matching rule of each descriptor on its own',
      });
    if (rl.name !== undefined)
      this.notes.push({ path: at, message: '`name` ignored: only `replaces` refers to it' });
    const unit = typeof rl.unit === 'string' ? rl.unit.toLowerCase() : undefined;
    if (rl.unlimited === true) {
      // ratelimit refuses a unit beside `unlimited`, so a file it loads has none.
      if (unit !== undefined)
        return void this.errors.push({
          path: `${at}.unit`,
          message: 'must be absent when `unlimited` is true',
        });
      return void this.notes.push({
        path,
        message: '`unlimited`: no policy; a descriptor no policy fits is OK and uncounted',
      });
    }
    const rpu = rl.requests_per_unit;
    if (unit === undefined || !KNOWN_UNITS.includes(unit))
      return void this.errors.push({
        path: `${at}.unit`,
        message: `must be one of ${KNOWN_UNITS.join(', ')}`,
      });
    if (typeof rpu !== 'number' || !Number.isSafeInteger(rpu) || rpu < 0)
      return void this.errors.push({
        path: `${at}.requests_per_unit`,
        message: 'must be a non-negative integer',
      });
    const window = UNITS[unit];
    if (!window)
      return void this.unmapped.push({
        path,
        message: `unit \`${unit}\` not mapped: Tally's longest period is 31d`,
      });
    if (rpu === 0)
      return void this.unmapped.push({
        path,
        message: '`requests_per_unit: 0` not mapped: Tally limits are positive',
      });
    if (exempt.length > 1)
      return void this.unmapped.push({
        path,
        message:
          'rules claimed first by siblings (exact or wildcard values) at two levels of one path: Tally has one `unless` per policy',
      });
    const prefixed = entries.filter((e) => e.prefix !== undefined);
    const only = exempt.length === 1 ? exempt[0] : undefined;
    this.policies.push({
      name: this.names.of(domain, entries),
      match: Object.fromEntries([
        ['domain', domain],
        ...entries.flatMap((e): [string, string][] =>
          e.value === undefined || e.prefix !== undefined ? [] : [[e.key, e.value]],
        ),
      ]),
      ...(prefixed.length > 0
        ? { match_prefix: Object.fromEntries(prefixed.map((e) => [e.key, [e.prefix as string]])) }
        : {}),
      ...(only !== undefined && only.values.length > 0 ? { unless: { [only.key]: only.values } } : {}),
      ...(only !== undefined && only.prefixes.length > 0
        ? { unless_prefix: { [only.key]: only.prefixes } }
        : {}),
      // Path order; a shared wildcard's values count together, so its key is not a dim.
      key: entries
        .filter((e) => e.value === undefined || (e.prefix !== undefined && !e.shared))
        .map((e) => e.key),
      ...(node.shadow_mode === true ? { mode: 'shadow' as const } : {}),
      windows: [
        { name: unit, role: window.role, algorithm: 'fixed_window', limit: rpu, period: window.period },
      ],
    });
  }
}

/** Converts the text of an envoyproxy/ratelimit configuration file (one or more YAML documents). */
export function importEnvoyConfig(text: string): EnvoyImportResult {
  const walker = new Walker();
  const docs = parseAllDocuments(text);
  if (!Array.isArray(docs)) return { ok: false, errors: [{ path: '(file)', message: 'not YAML documents' }] };
  const seen = new Set<string>();
  docs.forEach((doc, i) => {
    const where = `(document ${i + 1})`;
    if (doc.errors.length > 0)
      return void walker.errors.push({ path: where, message: doc.errors[0].message });
    const value: unknown = doc.toJS();
    if (isMapping(value) && typeof value.domain === 'string') {
      if (seen.has(value.domain))
        walker.errors.push({ path: where, message: `domain \`${value.domain}\` is defined twice` });
      seen.add(value.domain);
    }
    walker.domain(value, where);
  });
  if (docs.length === 0) walker.errors.push({ path: '(file)', message: 'no configuration (empty file)' });
  if (walker.errors.length > 0) return { ok: false, errors: walker.errors };
  const header = '# Converted by `tally policy import-envoy` from an envoyproxy/ratelimit configuration.\n';
  return {
    ok: true,
    policies: walker.policies,
    unmapped: walker.unmapped,
    notes: walker.notes,
    yaml: header + stringify({ policies: walker.policies }, { lineWidth: 0 }),
  };
}
