import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { envTokenEntries, tokenDigestHex } from './token-set';
import { TokensLoadError, TokenStore, type TokenReloadResult, type TokenReloadTrigger } from './token.store';

const ENV = envTokenEntries(['env-caller-token-0001'], 'env-admin-token-00001');
const fileWith = (...names: string[]) =>
  `tokens:\n${names.map((n) => `  - { name: ${n}, sha256: ${tokenDigestHex(`${n}-secret`)}, roles: [decide] }\n`).join('')}`;
const BAD = `tokens:\n  - { name: x, sha256: ${tokenDigestHex('env-admin-token-00001')}, roles: [decide, admin] }\n`;
/** Busy shared machines: file events and debounces may take a while, never forever. */
const WAIT = { timeout: 10_000, interval: 20 };

describe(TokenStore.name, () => {
  let dir: string;
  let path: string;
  let sut: TokenStore;
  let heard: [TokenReloadResult, TokenReloadTrigger][];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tally-tokens-'));
    path = join(dir, 'tokens.yaml');
    writeFileSync(path, fileWith('alpha'));
    sut = new TokenStore(path, ENV, 20);
    heard = [];
    sut.onReload((result, trigger) => heard.push([result, trigger]));
  });

  afterEach(() => {
    sut.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const accepts = (name: string) => sut.current.find(`${name}-secret`)?.name === name;

  describe('load', () => {
    it('compiles the file after the environment tokens', () => {
      const set = sut.load();

      expect(sut.current).toBe(set);
      expect(set.entries.map((e) => e.grant.name)).toEqual([
        'TALLY_API_TOKENS[0]',
        'TALLY_ADMIN_TOKEN',
        'alpha',
      ]);
    });

    it('throws listing every error of an invalid file', () => {
      writeFileSync(path, BAD);

      expect(() => sut.load()).toThrow(TokensLoadError);
      expect(() => sut.load()).toThrow(
        `invalid tokens file ${path}:\n` +
          '  tokens[0].roles: admin cannot be combined with decide or query: an admin token must not also be a caller token\n' +
          '  tokens[0].sha256: same token as TALLY_ADMIN_TOKEN: list a token once, in the file or in the environment',
      );
    });

    it('throws when the file cannot be read', () => {
      rmSync(path);

      expect(() => sut.load()).toThrow(/\(file\): cannot read: ENOENT/);
    });

    it('refuses to serve a set before one is loaded', () => {
      expect(() => sut.current).toThrow('no token set loaded yet');
    });
  });

  describe('reload', () => {
    beforeEach(() => sut.load());

    it('swaps in a changed file and tells listeners', async () => {
      writeFileSync(path, fileWith('alpha', 'beta'));

      const result = await sut.reload();

      expect(result).toEqual({ ok: true, version: sut.current.version, changed: true, tokens: 4 });
      expect(accepts('beta')).toBe(true);
      expect(heard).toEqual([[result, 'request']]);
    });

    it('keeps the running set object when the file is unchanged', async () => {
      const before = sut.current;

      const result = await sut.reload();

      expect(result).toEqual({ ok: true, version: before.version, changed: false, tokens: 3 });
      expect(sut.current).toBe(before);
    });

    it('keeps the running set when the new file is invalid, and reports every error', async () => {
      const before = sut.current;
      writeFileSync(path, BAD);

      const result = await sut.reload();

      expect(result.ok).toBe(false);
      expect(result.ok ? [] : result.errors.map((e) => e.path)).toEqual([
        'tokens[0].roles',
        'tokens[0].sha256',
      ]);
      expect(sut.current).toBe(before);
      expect(accepts('alpha')).toBe(true);
      expect(heard).toEqual([[result, 'request']]);
    });

    it('keeps the running set when the file has gone', async () => {
      rmSync(path);

      const result = await sut.reload();

      expect(result.ok).toBe(false);
      expect(accepts('alpha')).toBe(true);
    });

    it('serializes reloads so the last file read wins', async () => {
      writeFileSync(path, fileWith('gamma'));
      const first = sut.reload();
      const second = sut.reload();

      expect(await first).toMatchObject({ ok: true, changed: true });
      expect(await second).toMatchObject({ ok: true, changed: false });
      expect([accepts('gamma'), accepts('alpha')]).toEqual([true, false]);
    });
  });

  describe('watch', () => {
    beforeEach(() => {
      sut.load();
      sut.watch();
    });

    it('reloads when the file is replaced by renaming a temporary one over it', async () => {
      writeFileSync(join(dir, '.tokens.yaml.tmp'), fileWith('delta'));
      renameSync(join(dir, '.tokens.yaml.tmp'), path);

      await vi.waitFor(() => expect(accepts('delta')).toBe(true), WAIT);
      expect(accepts('alpha')).toBe(false);
      expect(heard.at(-1)?.[1]).toBe('file');
      // and keeps watching the replaced file
      writeFileSync(path, fileWith('epsilon'));
      await vi.waitFor(() => expect(accepts('epsilon')).toBe(true), WAIT);
    });

    it('keeps the running set when a bad file is saved, then takes the fixed one', async () => {
      writeFileSync(path, BAD);
      await vi.waitFor(() => expect(heard.at(-1)?.[0].ok).toBe(false), WAIT);
      expect(accepts('alpha')).toBe(true);

      writeFileSync(path, fileWith('zeta'));
      await vi.waitFor(() => expect(accepts('zeta')).toBe(true), WAIT);
    });
  });
});
