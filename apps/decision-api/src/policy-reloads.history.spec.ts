import { describe, expect, it } from 'vitest';
import type { PolicyStore } from '@tally/policy';
import {
  mergeReloadHistories,
  PolicyReloadHistory,
  RELOAD_HISTORY,
  type ReloadEntry,
} from './policy-reloads.history';

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

    expect(sut.own().reloads).toEqual([
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

    const versions = sut.own().reloads.map((r) => r.version);
    expect(versions).toHaveLength(RELOAD_HISTORY);
    expect(versions[0]).toBe(`v${RELOAD_HISTORY + 4}`);
  });
});

type Entry = ReloadEntry;

describe(mergeReloadHistories.name, () => {
  const entry = (at: string, version: string | null, outcome: Entry['outcome'] = 'applied'): Entry => ({
    at,
    trigger: 'request',
    outcome,
    version,
    errors: [],
  });

  it('lists a reload every worker ran once, at the earliest time, newest first', () => {
    // given two workers that ran the same two reloads a few milliseconds apart
    const a = [entry('2026-12-01T10:05:00.010Z', 'v2'), entry('2026-12-01T10:00:00.004Z', 'v1')];
    const b = [entry('2026-12-01T10:05:00.002Z', 'v2'), entry('2026-12-01T10:00:00.009Z', 'v1')];

    // then the merged list is the same whichever worker answers
    const sut = mergeReloadHistories([a, b]);
    expect(sut).toEqual([entry('2026-12-01T10:05:00.002Z', 'v2'), entry('2026-12-01T10:00:00.004Z', 'v1')]);
    expect(mergeReloadHistories([b, a])).toEqual(sut);
  });

  it('keeps what only one worker saw (a worker forked since), and two alike reloads of one worker', () => {
    const old = entry('2026-12-01T09:00:00.000Z', null, 'rejected');
    const a = [
      entry('2026-12-01T10:00:01.000Z', null, 'rejected'),
      entry('2026-12-01T10:00:00.000Z', null, 'rejected'),
      old,
    ];
    const b = [entry('2026-12-01T10:00:00.100Z', null, 'rejected')];

    expect(mergeReloadHistories([a, b]).map((e) => e.at)).toEqual([
      '2026-12-01T10:00:01.000Z',
      '2026-12-01T10:00:00.000Z',
      '2026-12-01T09:00:00.000Z',
    ]);
  });
});
