import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './cli';
import { policyImportEnvoy } from './policy-import.handler';

const FIXTURE = 'test/fixtures/envoy/ratelimit-config.yaml';

async function tally(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, {}, { stdout: (t) => out.push(t), stderr: (t) => err.push(t) });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

describe(policyImportEnvoy.name, () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tally-import-envoy-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('prints a policy file that `tally policy check` accepts, the report on stderr', async () => {
    // when
    const sut = await tally(['policy', 'import-envoy', FIXTURE]);
    // then: stdout is the file alone, stderr says what is not mapped, exit 0 (a partial conversion)
    expect(sut.code).toBe(0);
    expect(sut.stdout).toMatch(/^# Converted by/);
    expect(sut.stderr.split('\n')).toEqual([
      "not mapped: edge: descriptors[6] unit `year` not mapped: Tally's longest period is 31d",
      'not mapped: billing: descriptors[0].descriptors[0].rate_limit `replaces` not mapped: Tally applies every matching rule of each descriptor on its own',
      'note: edge: descriptors[3] `unlimited`: no policy; a descriptor no policy fits is OK and uncounted',
      'note: billing: descriptors[0].descriptors[0] `detailed_metric` ignored: Tally labels its metrics by policy',
      `${FIXTURE}: 7 policies, 2 not mapped`,
    ]);
    const file = join(dir, 'printed.yaml');
    await writeFile(file, sut.stdout);
    const check = await tally(['policy', 'check', file]);
    expect(check.code).toBe(0);
    expect(check.stdout).toContain('valid, 7 policies');
  });

  it('writes --out FILE', async () => {
    const out = join(dir, 'out.yaml');
    const sut = await tally(['policy', 'import-envoy', FIXTURE, '--out', out]);
    expect(sut.code).toBe(0);
    expect(sut.stdout).toBe(`${FIXTURE}: 7 policies, 2 not mapped; written to ${out}`);
    expect(await readFile(out, 'utf8')).toContain('name: billing-plan-gold-tenant');
  });

  it('exits 1 when nothing could be mapped, and when the input is invalid, stdout empty', async () => {
    const none = join(dir, 'none.yaml');
    await writeFile(
      none,
      'domain: d\ndescriptors: [{ key: generic_key, value: y, rate_limit: { unit: year, requests_per_unit: 1 } }]\n',
    );
    const nothing = await tally(['policy', 'import-envoy', none]);
    expect(nothing.code).toBe(1);
    // `> policies.yaml` must not fill the file with a report
    expect(nothing.stdout).toBe('');
    expect(nothing.stderr.split('\n')).toEqual([
      "not mapped: d: descriptors[0] unit `year` not mapped: Tally's longest period is 31d",
      `${none}: 0 policies, 1 not mapped: nothing could be mapped`,
    ]);

    const bad = join(dir, 'bad.yaml');
    await writeFile(bad, 'descriptors: []\n');
    const invalid = await tally(['policy', 'import-envoy', bad]);
    expect(invalid.code).toBe(1);
    expect(invalid.stdout).toBe('');
    expect(invalid.stderr).toBe(
      `${bad}: invalid envoyproxy/ratelimit configuration, 1 error\n  (document 1): \`domain\` must be a non-empty string`,
    );

    const missing = await tally(['policy', 'import-envoy', join(dir, 'absent.yaml')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^tally policy import-envoy: cannot read .*absent\.yaml: ENOENT/);
  });
});
