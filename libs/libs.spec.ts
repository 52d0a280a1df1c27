import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import libList from './libs.json';

/**
 * libs/libs.json is the one list of libs: dependency-cruiser's layer rules and vitest's aliases read
 * it; the places that cannot read it (JSON configs, the docs) are held to it here, so adding, renaming
 * or removing a lib fails this test until every one of them says the same.
 */
const ROOT = join(__dirname, '..');
const LIBS: Record<string, { layer: number; imports: string[] }> = libList.libs;
const names = Object.keys(LIBS).sort();

function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(join(ROOT, path), 'utf8')) as T;
}

/** The rows of the markdown table that follows `heading` in docs/architecture.md, split into cells. */
function tableAfter(heading: string): string[][] {
  const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  const start = doc.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`docs/architecture.md has no "${heading}"`);
  const lines = doc.slice(start).split('\n');
  const first = lines.findIndex((l) => l.startsWith('|'));
  const rows: string[][] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim()),
    );
  }
  return rows;
}

const backticked = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]);

describe('the list of libs (libs/libs.json)', () => {
  it('names every folder under libs/, each with a src/index.ts', () => {
    const folders = readdirSync(join(ROOT, 'libs'), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();

    expect(folders).toEqual(names);
    for (const lib of names) expect(readdirSync(join(ROOT, 'libs', lib, 'src'))).toContain('index.ts');
  });

  it('lets a lib import only known libs of a lower layer (what keeps the graph acyclic)', () => {
    for (const [lib, { layer, imports }] of Object.entries(LIBS))
      for (const other of imports) {
        expect(names, `${lib} imports ${other}`).toContain(other);
        expect(LIBS[other].layer, `${lib} (layer ${layer}) imports ${other}`).toBeLessThan(layer);
      }
  });

  it('is the @tally/* paths of tsconfig.json', () => {
    const { compilerOptions } = readJson<{ compilerOptions: { paths: Record<string, string[]> } }>(
      'tsconfig.json',
    );
    const expected = Object.fromEntries(names.map((l) => [`@tally/${l}`, [`libs/${l}/src/index.ts`]]));

    // The client package's second entry is the one path that is not a lib's index.
    expect(compilerOptions.paths).toEqual({
      ...expected,
      '@tally/client/nest': ['libs/client/src/nest/index.ts'],
    });
  });

  it('is the library projects of nest-cli.json', () => {
    const { projects } = readJson<{ projects: Record<string, { type: string; root: string }> }>(
      'nest-cli.json',
    );
    const libraries = Object.entries(projects).filter(([, p]) => p.type === 'library');

    expect(libraries.map(([name]) => name).sort()).toEqual(names);
    for (const [name, p] of libraries)
      expect(p).toEqual({
        type: 'library',
        root: `libs/${name}`,
        entryFile: 'index',
        sourceRoot: `libs/${name}/src`,
      });
  });

  it('is the Libraries table of docs/architecture.md, one row per lib', () => {
    const rows = tableAfter('## Libraries');

    expect(rows.map((r) => backticked(r[0])[0]).sort()).toEqual(names);
  });

  it('is the dependency direction table of docs/architecture.md: same layers, same imports', () => {
    const rows = tableAfter('### Dependency direction').filter((r) => /^\d+$/.test(r[0]));
    const documented = Object.fromEntries(
      rows.map(([layer, lib, imports]) => [
        backticked(lib)[0],
        { layer: Number(layer), imports: backticked(imports).sort() },
      ]),
    );

    expect(documented).toEqual(
      Object.fromEntries(
        Object.entries(LIBS).map(([lib, { layer, imports }]) => [
          lib,
          { layer, imports: [...imports].sort() },
        ]),
      ),
    );
  });
});
