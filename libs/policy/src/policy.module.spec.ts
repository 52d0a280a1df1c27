import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Test } from '@nestjs/testing';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { POLICY_MODULE_OPTIONS } from './policy.constants';
import { PolicyModule } from './policy.module';
import { PolicyLoadError, PolicyStore } from './policy.store';

const GOOD =
  'policies:\n  - { name: p, key: [tenant], windows: [{ name: w, role: burst, algorithm: token_bucket, limit: 5, period: 1s }] }\n';

describe(PolicyModule.name, () => {
  let dir: string;
  let path: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tally-policy-module-'));
    path = join(dir, 'policies.yaml');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('provides a store already loaded from the configured path', async () => {
    writeFileSync(path, GOOD);
    const app = await Test.createTestingModule({
      imports: [PolicyModule.forRoot({ path, watch: true })],
    }).compile();

    const sut = app.get(PolicyStore);

    expect(sut.current.policies.map((p) => p.name)).toEqual(['p']);
    await app.close();
  });

  it('fails the boot with every error when the file is invalid', async () => {
    writeFileSync(path, 'policies:\n  - name: P\n');

    const boot = Test.createTestingModule({
      imports: [PolicyModule.forRoot({ path, watch: false })],
    }).compile();

    await expect(boot).rejects.toThrow(PolicyLoadError);
    await expect(boot).rejects.toThrow(
      /policies\[0\]\.name: must match.*\n.*policies\[0\]\.key: is required/,
    );
  });

  it('takes its options from a factory', async () => {
    writeFileSync(path, GOOD);
    const app = await Test.createTestingModule({
      imports: [PolicyModule.forRootAsync({ useFactory: () => ({ path, watch: false }) })],
    }).compile();

    expect(app.get(PolicyStore).current.policies).toHaveLength(1);
    expect(app.get(POLICY_MODULE_OPTIONS)).toEqual({ path, watch: false });
    await app.close();
  });

  it('stops watching when the app closes', async () => {
    writeFileSync(path, GOOD);
    const app = await Test.createTestingModule({
      imports: [PolicyModule.forRoot({ path, watch: true })],
    }).compile();
    const close = vi.spyOn(app.get(PolicyStore), 'close');

    await app.close();

    expect(close).toHaveBeenCalled();
  });
});
