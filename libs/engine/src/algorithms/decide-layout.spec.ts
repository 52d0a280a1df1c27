import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DECIDE_ARGV, DECIDE_REPLY, layoutPrelude, type LayoutSection } from './decide-layout';
import { decideSource, LUA_DIR } from './decide-source';

/**
 * The legend's sections between `<title>:` and the next top-level title: a section line is
 * `  <name>:` or `  <name> (x <count field>):`, a field line `    <name>  <meaning>`.
 */
function legendSections(legend: string, title: string): LayoutSection[] {
  const lines = legend.split('\n');
  const from = lines.findIndex((l) => l.startsWith(`${title}`));
  const sections: { name: string; repeat?: string; fields: string[] }[] = [];
  for (const line of lines.slice(from + 1)) {
    if (/^\S/.test(line)) break;
    const section = /^ {2}([a-z_]+)(?: \(x ([a-z_]+)\))?:$/.exec(line);
    if (section !== null) {
      sections.push({
        name: section[1],
        ...(section[2] === undefined ? {} : { repeat: section[2] }),
        fields: [],
      });
      continue;
    }
    const field = /^ {4}([a-z_]+)\s+\S/.exec(line);
    if (field !== null) sections[sections.length - 1].fields.push(field[1]);
  }
  return sections;
}

const LEGEND = readFileSync(join(LUA_DIR, 'decide.lua'), 'utf8').split('--]]')[0];

describe('decide.lua layout', () => {
  it('holds the ARGV table to the legend at the top of decide.lua', () => {
    expect(legendSections(LEGEND, 'ARGV:')).toEqual(DECIDE_ARGV);
  });

  it('holds the reply table to the legend', () => {
    expect(legendSections(LEGEND, 'Reply (array):')).toEqual(DECIDE_REPLY);
  });

  it('counts every repeated section by a field that comes before it', () => {
    for (const table of [DECIDE_ARGV, DECIDE_REPLY] as readonly (readonly LayoutSection[])[]) {
      table.forEach((s, i) => {
        if (s.repeat === undefined) return;
        expect(table.slice(0, i).some((t) => t.repeat === undefined && t.fields.includes(s.repeat!))).toBe(
          true,
        );
      });
    }
  });

  it('puts the layout constants into the script it loads', () => {
    const sut = decideSource();
    expect(sut).toContain(layoutPrelude());
    expect(sut).not.toMatch(/^-- @layout/m);
    expect(layoutPrelude()).toContain('local A_WINDOW_TAG = 5');
    expect(layoutPrelude()).toContain('local R_HEAD_N = 6');
  });
});
