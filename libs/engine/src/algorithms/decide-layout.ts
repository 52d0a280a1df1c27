/**
 * decide.lua's ARGV and reply, described once: each section's fields in order, and for a repeated
 * section the count field that says how many times it comes. The encoder (`decideArgs`) writes ARGV
 * field by field from this table, the decoder (`parseDecideReply`) reads the reply with it, the Lua
 * reads its positions from constants made from it (`layoutPrelude`), and decide-layout.spec.ts holds
 * it to the KEYS/ARGV legend at the top of the script. Adding a field is one line here and one in the
 * legend; no index elsewhere moves by hand.
 */
export interface LayoutSection {
  /** The section's name in the legend (`window`, `override`). */
  readonly name: string;
  /** A repeated section: the count field, read earlier, that says how many times it comes. */
  readonly repeat?: string;
  readonly fields: readonly string[];
}

export const DECIDE_ARGV = [
  {
    name: 'header',
    fields: ['now', 'cost', 'idempotency_ttl', 'fingerprint', 'payload', 'window_count'],
  },
  {
    name: 'window',
    repeat: 'window_count',
    fields: ['code', 'limit', 'period', 'mode', 'tag', 'param'],
  },
  { name: 'overrides', fields: ['override_count'] },
  { name: 'override', repeat: 'override_count', fields: ['field', 'first', 'count'] },
  { name: 'leases', fields: ['lease_count'] },
  { name: 'lease', repeat: 'lease_count', fields: ['id', 'payload'] },
] as const satisfies readonly LayoutSection[];

export const DECIDE_REPLY = [
  {
    name: 'head',
    fields: ['status', 'now_ms', 'retry_after_ms', 'binding', 'stored', 'window_count'],
  },
  { name: 'window', repeat: 'window_count', fields: ['remaining', 'reset_ms', 'would_deny'] },
  { name: 'leases', fields: ['lease_count'] },
  { name: 'lease', repeat: 'lease_count', fields: ['expires_ms'] },
  { name: 'overrides', fields: ['override_count'] },
  { name: 'override', repeat: 'override_count', fields: ['limit', 'version'] },
] as const satisfies readonly LayoutSection[];

type Sections = typeof DECIDE_ARGV | typeof DECIDE_REPLY;
/** The fields of one section of a table, by the section's name. */
export type FieldsOf<T extends Sections, N extends T[number]['name']> = Extract<
  T[number],
  { name: N }
>['fields'][number];

/** 0-based position of a field in its section. */
export function fieldIndex(table: readonly LayoutSection[], section: string, field: string): number {
  const s = sectionOf(table, section);
  const i = s.fields.indexOf(field);
  if (i < 0) throw new Error(`decide layout: no field ${field} in ${section}`);
  return i;
}

export function sectionOf(table: readonly LayoutSection[], name: string): LayoutSection {
  const s = table.find((x) => x.name === name);
  if (s === undefined) throw new Error(`decide layout: no section ${name}`);
  return s;
}

/**
 * Lua constants for the assembled script, so decide.lua reads its positions from this table:
 * `A_<SECTION>_<FIELD>` is a field's 1-based offset in its section, `A_<SECTION>_N` the section's
 * width; `R_…` the same for the reply. The header's and head's offsets are their absolute indices.
 */
export function layoutPrelude(): string {
  const lines: string[] = [];
  for (const [prefix, table] of [
    ['A', DECIDE_ARGV],
    ['R', DECIDE_REPLY],
  ] as const) {
    for (const s of table as readonly LayoutSection[]) {
      const name = `${prefix}_${s.name.toUpperCase()}`;
      lines.push(`local ${name}_N = ${s.fields.length}`);
      s.fields.forEach((f, i) => lines.push(`local ${name}_${f.toUpperCase()} = ${i + 1}`));
    }
  }
  return `-- decide-layout.ts: positions of ARGV and reply fields (generated at load)\n${lines.join('\n')}\n`;
}
