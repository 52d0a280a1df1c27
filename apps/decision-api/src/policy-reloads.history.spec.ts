import { describe, expect, it } from 'vitest';
import type { PolicyStore } from '@tally/policy';
import { PolicyReloadHistory, RELOAD_HISTORY } from './policy-reloads.history';

const store = { onReload: () => () => undefined } as unknown as PolicyStore;

describe(PolicyReloadHistory.name, () => {
  it('lists reloads newest first, rejected ones with every error', () => {
    const sut = new PolicyReloadHistory(store);

    sut.record({ ok: true, version: 'v1', changed: true }, 'request', Date.UTC(2026, 11, 1, 10));
    sut.record(
      { ok: false, errors: [{ path: 'policies[0].windows', message: 'must not be empty' }] },
      'file',
      Date.UTC(2026, 11, 1, 11),
    );
    sut.record({ ok: true, version: 'v1', changed: false }, 'request', Date.UTC(2026, 11, 1, 12));

    expect(sut.list().reloads).toEqual([
      { at: '2026-12-01T12:00:00.000Z', trigger: 'request', outcome: 'unchanged', version: 'v1', errors: [] },
      {
        at: '2026-12-01T11:00:00.000Z',
        trigger: 'file',
        outcome: 'rejected',
        version: null,
        errors: [{ path: 'policies[0].windows', message: 'must not be empty' }],
      },
      { at: '2026-12-01T10:00:00.000Z', trigger: 'request', outcome: 'applied', version: 'v1', errors: [] },
    ]);
  });

  it(`keeps the last ${RELOAD_HISTORY} only`, () => {
    const sut = new PolicyReloadHistory(store);

    for (let i = 0; i < RELOAD_HISTORY + 5; i++)
      sut.record({ ok: true, version: `v${i}`, changed: true }, 'file', i);

    const versions = sut.list().reloads.map((r) => r.version);
    expect(versions).toHaveLength(RELOAD_HISTORY);
    expect(versions[0]).toBe(`v${RELOAD_HISTORY + 4}`);
  });
});
