import { describe, expect, it } from 'vitest';
import { parsePolicyKeyParam, POLICY_KEY, POLICY_KEY_MESSAGE } from './policy-key-param';

const NEEDS_POLICY = { field: 'key', message: 'key needs policy: usage per key is kept per policy' };

describe(parsePolicyKeyParam.name, () => {
  it('has no key when none is given, with or without a policy', () => {
    expect(parsePolicyKeyParam({})).toEqual({ ok: true, value: undefined });
    expect(parsePolicyKeyParam({ policy: 'p' })).toEqual({ ok: true, value: undefined });
  });

  it.each([
    ['a plain key', 'acme|svc'],
    ['spaces, colons, globs and non-ASCII', 'tenant a:*?[x] é 日本 🚀'],
    ['2048 characters', 'k'.repeat(2048)],
    ['2048 astral characters (4096 UTF-16 units)', '🚀'.repeat(2048)],
  ])('takes %s verbatim when a policy is named', (_, key) => {
    expect(parsePolicyKeyParam({ key, policy: 'p' })).toEqual({ ok: true, value: key });
  });

  it('refuses a key without policy, on the key', () => {
    expect(parsePolicyKeyParam({ key: 'k' })).toEqual({ ok: false, errors: [NEEDS_POLICY] });
  });

  it.each([
    ['empty', ''],
    ['2049 characters', 'k'.repeat(2049)],
    ['a newline', 'a\nb'],
    ['a NUL', 'a\u0000b'],
    ['DEL', 'a\u007fb'],
    ['a C1 control', 'a\u0085b'],
  ])('refuses a key that is %s', (_, key) => {
    expect(parsePolicyKeyParam({ key, policy: 'p' })).toEqual({
      ok: false,
      errors: [{ field: 'key', message: POLICY_KEY_MESSAGE }],
    });
  });

  it('lists both problems of a bad key without policy', () => {
    expect(parsePolicyKeyParam({ key: '' })).toEqual({
      ok: false,
      errors: [{ field: 'key', message: POLICY_KEY_MESSAGE }, NEEDS_POLICY],
    });
  });

  it('exports the rule the transport DTO checks', () => {
    expect(POLICY_KEY.test('ok')).toBe(true);
    expect(POLICY_KEY.test('tab\there')).toBe(false);
  });
});
