import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot, runBench } from './bench.handler';

// A stand-in for scripts/bench.mjs: echoes its arguments, writes the hot-path report, and fails
// (without a report) when asked for the ledger bench, like a bench that could not start its stack.
const FAKE = `
import { mkdirSync, writeFileSync } from 'node:fs';
const args = process.argv.slice(2);
console.log('bench args: ' + args.join(' '));
console.error('progress line');
if (args.includes('ledger')) process.exit(3);
mkdirSync('.local/bench', { recursive: true });
writeFileSync('.local/bench/hot-path.json', JSON.stringify({ ratio: 0.9 }));
`;

describe(runBench.name, () => {
  const root = mkdtempSync(join(tmpdir(), 'tally-bench-'));
  mkdirSync(join(root, 'scripts'));
  writeFileSync(join(root, 'scripts', 'bench.mjs'), FAKE);
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const capture = () => {
    const out: string[] = [];
    const err: string[] = [];
    return { out, err, io: { stdout: (t: string) => out.push(t), stderr: (t: string) => err.push(t) } };
  };

  it('streams the script output and exits with its code', async () => {
    const { out, err, io } = capture();

    const sut = await runBench({ root, benches: ['hot-path'], build: false, json: false, io });

    expect(sut).toEqual({ exitCode: 0, json: null, text: '' });
    expect(out).toEqual(['bench args: hot-path --no-build']);
    expect(err).toEqual(['progress line']);
  });

  it('with --json sends the output to stderr and prints the reports this run wrote', async () => {
    const { out, err, io } = capture();

    const sut = await runBench({ root, benches: ['hot-path', 'ledger'], build: true, json: true, io });

    expect(sut.exitCode).toBe(3);
    expect(sut.json).toEqual({ 'hot-path': { ratio: 0.9 }, ledger: null });
    expect(out).toEqual([]);
    expect(err).toEqual(['bench args: hot-path ledger', 'progress line']);
  });
});

describe(repoRoot.name, () => {
  it('finds the checkout above this file', () => {
    expect(repoRoot(__dirname)).toBe(join(__dirname, '..', '..', '..'));
  });
});
