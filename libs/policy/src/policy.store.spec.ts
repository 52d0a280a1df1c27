import { mkdtempSync, renameSync, rmSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { versionOf } from './policy.compiler';
import { PolicyLoadError, PolicyStore, type ReloadResult, type ReloadTrigger } from './policy.store';

const policyFile = (limit: number) =>
  `policies:\n  - name: p\n    key: [tenant]\n    windows: [{ name: w, role: sustained, algorithm: fixed_window, limit: ${limit}, period: 1m }]\n`;
/** Busy shared machines: file events and debounces may take a while, never forever. */
const WAIT = { timeout: 10_000, interval: 20 };
const BAD = 'policies:\n  - name: p\n    key: [User]\n    windows: []\n';

/**
 * Resolves once this process has been told that `name` in `dir` changed: from then on the store's own
 * watch of that directory has had the event too (both are served by the same inotify watch), so
 * whatever it would do is on its (fake) debounce timer. Start it before the write.
 */
function directoryEvent(dir: string, name: string): Promise<void> {
  return new Promise((resolve) => {
    const watcher = watch(dir, { persistent: false }, (_event, changed) => {
      if (changed !== name) return;
      watcher.close();
      // One more turn, so that every watcher of the directory has run its callback.
      setImmediate(resolve);
    });
  });
}

describe(PolicyStore.name, () => {
  let dir: string;
  let path: string;
  let sut: PolicyStore;
  let heard: [ReloadResult, ReloadTrigger][];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tally-policy-'));
    path = join(dir, 'policies.yaml');
    writeFileSync(path, policyFile(10));
    sut = new PolicyStore({ path, watch: false, debounceMs: 20, clock: () => 42 });
    heard = [];
    sut.onReload((result, trigger) => heard.push([result, trigger]));
  });

  afterEach(() => {
    sut.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const limitInForce = () => sut.current.policies[0].windows[0].limit;

  describe('load', () => {
    it('compiles the file into the current set', () => {
      const set = sut.load();

      expect(sut.current).toBe(set);
      expect(set).toMatchObject({ version: versionOf(policyFile(10)), loadedAt: 42 });
      expect(limitInForce()).toBe(10);
    });

    it('throws listing every error of an invalid file', () => {
      writeFileSync(path, BAD);

      expect(() => sut.load()).toThrow(PolicyLoadError);
      expect(() => sut.load()).toThrow(
        `invalid policy file ${path}:\n` +
          '  policies[0].key: unknown dim "User"; must be selector dims (tenant, principal, token, client, route) or attribute names ([a-z0-9_.-]{1,64})\n' +
          '  policies[0].windows: must be a non-empty list of windows',
      );
    });

    it('throws when the file cannot be read', () => {
      rmSync(path);

      expect(() => sut.load()).toThrow(/\(file\): cannot read: ENOENT/);
    });

    it('refuses to serve a set before one is loaded', () => {
      expect(() => sut.current).toThrow('no policy set loaded yet');
    });
  });

  describe('reload', () => {
    beforeEach(() => sut.load());

    it('swaps in a changed file and tells listeners', async () => {
      writeFileSync(path, policyFile(20));

      const result = await sut.reload();

      expect(result).toEqual({ ok: true, version: versionOf(policyFile(20)), changed: true });
      expect(limitInForce()).toBe(20);
      expect(heard).toEqual([[result, 'request']]);
    });

    it('keeps the running object when the file is unchanged', async () => {
      const before = sut.current;

      const result = await sut.reload();

      expect(result).toEqual({ ok: true, version: before.version, changed: false });
      expect(sut.current).toBe(before);
    });

    it('keeps the running set when the new file is invalid, and reports every error', async () => {
      const before = sut.current;
      writeFileSync(path, BAD);

      const result = await sut.reload();

      expect(result).toEqual({
        ok: false,
        errors: [
          {
            path: 'policies[0].key',
            message:
              'unknown dim "User"; must be selector dims (tenant, principal, token, client, route) or attribute names ([a-z0-9_.-]{1,64})',
          },
          { path: 'policies[0].windows', message: 'must be a non-empty list of windows' },
        ],
      });
      expect(sut.current).toBe(before);
      expect(heard).toEqual([[result, 'request']]);
    });

    it('keeps the running set when the file has gone', async () => {
      rmSync(path);

      const result = await sut.reload();

      expect(result.ok).toBe(false);
      expect(limitInForce()).toBe(10);
    });

    it('serializes reloads so the last file read wins', async () => {
      writeFileSync(path, policyFile(20));
      const first = sut.reload();
      const second = sut.reload();

      expect(await first).toMatchObject({ ok: true, changed: true });
      expect(await second).toMatchObject({ ok: true, changed: false });
      expect(limitInForce()).toBe(20);
    });

    it('lets every listener hear the outcome even if one throws, and unsubscribes', async () => {
      sut.onReload(() => {
        throw new Error('broken metrics');
      });
      const late = vi.fn();
      const unsubscribe = sut.onReload(late);

      await sut.reload();
      unsubscribe();
      await sut.reload();

      expect(heard).toHaveLength(2);
      expect(late).toHaveBeenCalledTimes(1);
    });
  });

  describe('watch', () => {
    beforeEach(() => {
      sut.load();
      sut.watch();
    });

    it('reloads when the file is rewritten in place', async () => {
      writeFileSync(path, policyFile(30));

      await vi.waitFor(() => expect(limitInForce()).toBe(30), WAIT);
      expect(heard.at(-1)).toEqual([{ ok: true, version: versionOf(policyFile(30)), changed: true }, 'file']);
    });

    it('reloads when an editor replaces the file by renaming a temporary one over it', async () => {
      writeFileSync(join(dir, '.policies.yaml.swp'), policyFile(40));
      renameSync(join(dir, '.policies.yaml.swp'), path);

      await vi.waitFor(() => expect(limitInForce()).toBe(40), WAIT);
      // and keeps watching the replaced file
      writeFileSync(path, policyFile(41));
      await vi.waitFor(() => expect(limitInForce()).toBe(41), WAIT);
    });

    it('keeps the running set when a bad file is saved, then takes the fixed one', async () => {
      writeFileSync(path, BAD);
      await vi.waitFor(() => expect(heard.at(-1)?.[0].ok).toBe(false), WAIT);
      expect(limitInForce()).toBe(10);

      writeFileSync(path, policyFile(50));
      await vi.waitFor(() => expect(limitInForce()).toBe(50), WAIT);
    });

    // Nothing may happen: instead of sleeping and hoping it would have happened by then, the tests
    // wait for the directory event, run the debounce on a fake clock, and use a reload as a barrier
    // (reloads are serialized, so a reload the watch started would be heard before it).
    afterEach(() => {
      vi.useRealTimers();
    });

    it('ignores other files in the directory', async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      const seen = directoryEvent(dir, 'other.yaml');
      writeFileSync(join(dir, 'other.yaml'), 'x: 1\n');
      await seen;
      await vi.advanceTimersByTimeAsync(20);

      await sut.reload();

      expect(heard.map(([, trigger]) => trigger)).toEqual(['request']);
    });

    it('stops reloading after close', async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      sut.close();
      const seen = directoryEvent(dir, 'policies.yaml');
      writeFileSync(path, policyFile(60));
      await seen;
      await vi.advanceTimersByTimeAsync(20);

      expect(limitInForce()).toBe(10);
      expect(heard).toEqual([]);
    });
  });
});
