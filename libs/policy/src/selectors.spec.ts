import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { normalizeAttributes, normalizeSelectors } from './selectors';

const SECRET = 'test-secret';
const bytes = (n: number) => 'a'.repeat(n);
/** 'é' is 2 bytes in UTF-8, '😀' is 4 (two UTF-16 units). */
const multibyte = (n: number) => 'é'.repeat(n);

describe(normalizeSelectors.name, () => {
  it('trims values and returns the dims in canonical order', () => {
    const sut = normalizeSelectors({ route: ' evaluate\t', tenant: '\n acme ', principal: 'svc-42' }, SECRET);

    expect(sut).toEqual({ ok: true, selectors: { tenant: 'acme', principal: 'svc-42', route: 'evaluate' } });
    expect(sut.ok && Object.keys(sut.selectors)).toEqual(['tenant', 'principal', 'route']);
    expect(sut.ok && Object.isFrozen(sut.selectors)).toBe(true);
  });

  it('treats absent selectors as none', () => {
    expect(normalizeSelectors(undefined, SECRET)).toEqual({ ok: true, selectors: {} });
  });

  it.each([
    ['exactly 256 bytes', bytes(256), true],
    ['257 bytes', bytes(257), false],
    ['256 bytes of 2-byte characters', multibyte(128), true],
    ['258 bytes of 2-byte characters (129 characters)', multibyte(129), false],
    ['256 bytes with surrounding spaces', `  ${bytes(256)}  `, true],
    ['64 four-byte emoji (256 bytes)', '😀'.repeat(64), true],
    ['65 four-byte emoji (260 bytes)', '😀'.repeat(65), false],
    ['one byte', 'x', true],
  ])('%s → valid %s', (_name, value, valid) => {
    const sut = normalizeSelectors({ tenant: value }, SECRET);

    expect(sut.ok).toBe(valid);
    if (!sut.ok)
      expect(sut).toMatchObject({ field: 'selectors.tenant', message: 'must be at most 256 bytes (UTF-8)' });
  });

  it.each([
    ['empty', '', 'must not be empty'],
    ['only spaces', '   \t ', 'must not be empty'],
    ['NUL', 'ac\u0000me', 'must not contain control characters'],
    ['an inner newline', 'ac\nme', 'must not contain control characters'],
    ['unit separator', 'a\u001fb', 'must not contain control characters'],
    ['DEL', 'a\u007fb', 'must not contain control characters'],
    ['C1 NEL', 'a\u0085b', 'must not contain control characters'],
    ['C1 APC', 'a\u009fb', 'must not contain control characters'],
    ['a lone surrogate', 'a\ud800b', 'must be valid Unicode'],
  ])('refuses %s', (_name, value, message) => {
    const sut = normalizeSelectors({ principal: value }, SECRET);

    expect(sut).toEqual({
      ok: false,
      reason: 'selector_identity_invalid',
      field: 'selectors.principal',
      message,
    });
  });

  it('accepts the characters just outside the control ranges', () => {
    expect(normalizeSelectors({ tenant: 'a b~\u00a0\u00a1x' }, SECRET)).toEqual({
      ok: true,
      selectors: { tenant: 'a b~\u00a0\u00a1x' },
    });
  });

  it.each([
    ['null', null, 'selectors', 'must be an object of string values'],
    ['an array', ['acme'], 'selectors', 'must be an object of string values'],
    ['a string', 'acme', 'selectors', 'must be an object of string values'],
    ['a number value', { tenant: 42 }, 'selectors.tenant', 'must be a string'],
    ['a null value', { tenant: null }, 'selectors.tenant', 'must be a string'],
    ['an object value', { tenant: { $ne: 1 } }, 'selectors.tenant', 'must be a string'],
    [
      'an unknown dim',
      { user: 'u' },
      'selectors.user',
      'unknown selector; must be one of tenant, principal, token, client, route',
    ],
    [
      'a hostile unknown name',
      { 'x\ny': 'u' },
      'selectors',
      'unknown selector; must be one of tenant, principal, token, client, route',
    ],
    [
      'a __proto__ key',
      JSON.parse('{"__proto__": "x"}'),
      'selectors.__proto__',
      'unknown selector; must be one of tenant, principal, token, client, route',
    ],
  ])('refuses %s', (_name, raw, field, message) => {
    expect(normalizeSelectors(raw, SECRET)).toEqual({
      ok: false,
      reason: 'selector_identity_invalid',
      field,
      message,
    });
  });

  describe('token', () => {
    const raw = 'sk_live_0123456789abcdef';
    const expected = `t_${createHmac('sha256', SECRET).update(raw).digest('base64url').slice(0, 22)}`;

    it('is replaced by t_ + 22 chars of base64url HMAC-SHA256 of the trimmed value', () => {
      const sut = normalizeSelectors({ token: `  ${raw} ` }, SECRET);

      expect(sut).toEqual({ ok: true, selectors: { token: expected } });
      expect(expected).toMatch(/^t_[A-Za-z0-9_-]{22}$/);
    });

    it('depends on the secret', () => {
      const sut = normalizeSelectors({ token: raw }, 'another-secret');

      expect(sut.ok && sut.selectors.token).not.toBe(expected);
    });

    it('never leaks the raw value, valid or not', () => {
      const valid = normalizeSelectors({ tenant: 'acme', token: raw }, SECRET);
      const tooLong = normalizeSelectors({ token: `${raw}${bytes(300)}` }, SECRET);
      const control = normalizeSelectors({ token: `${raw}\u0000` }, SECRET);

      for (const sut of [valid, tooLong, control]) expect(JSON.stringify(sut)).not.toContain(raw);
      expect(tooLong).toMatchObject({ ok: false, field: 'selectors.token' });
      expect(control).toMatchObject({ ok: false, field: 'selectors.token' });
    });
  });
});

describe(normalizeAttributes.name, () => {
  it('trims values and sorts names', () => {
    const sut = normalizeAttributes({ plan: ' premium ', principal_class: 'machine', 'region.v2': 'eu' });

    expect(sut).toEqual({
      ok: true,
      attributes: { plan: 'premium', principal_class: 'machine', 'region.v2': 'eu' },
    });
    expect(sut.ok && Object.keys(sut.attributes)).toEqual(['plan', 'principal_class', 'region.v2']);
  });

  it('treats absent attributes as none', () => {
    expect(normalizeAttributes(undefined)).toEqual({ ok: true, attributes: {} });
  });

  it('keeps a __proto__ attribute as plain data', () => {
    const sut = normalizeAttributes(JSON.parse('{"__proto__": "x"}'));

    expect(sut.ok && Object.hasOwn(sut.attributes, '__proto__')).toBe(true);
    expect(sut.ok && Object.getPrototypeOf(sut.attributes)).toBe(Object.prototype);
  });

  it('accepts 32 attributes and refuses 33', () => {
    const attrs = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`a${i}`, 'v']));

    expect(normalizeAttributes(attrs(32)).ok).toBe(true);
    expect(normalizeAttributes(attrs(33))).toEqual({
      ok: false,
      reason: 'selector_identity_invalid',
      field: 'attributes',
      message: 'must have at most 32 entries',
    });
  });

  it.each([
    ['an upper-case name', { Plan: 'x' }, 'attributes', 'names must match [a-z0-9_.-]{1,64}'],
    ['an empty name', { '': 'x' }, 'attributes', 'names must match [a-z0-9_.-]{1,64}'],
    ['a 65-character name', { [bytes(65)]: 'x' }, 'attributes', 'names must match [a-z0-9_.-]{1,64}'],
    ['a selector dim as name', { tenant: 'x' }, 'attributes.tenant', 'is a selector; send it in selectors'],
    ['a boolean value', { vip: true }, 'attributes.vip', 'must be a string'],
    ['a 257-byte value', { plan: bytes(257) }, 'attributes.plan', 'must be at most 256 bytes (UTF-8)'],
    [
      'a control character',
      { plan: 'pre\u0007mium' },
      'attributes.plan',
      'must not contain control characters',
    ],
    ['an empty value', { plan: ' ' }, 'attributes.plan', 'must not be empty'],
    ['an array', [], 'attributes', 'must be an object of string values'],
  ])('refuses %s', (_name, raw, field, message) => {
    expect(normalizeAttributes(raw)).toEqual({
      ok: false,
      reason: 'selector_identity_invalid',
      field,
      message,
    });
  });

  it('accepts a 64-character name', () => {
    expect(normalizeAttributes({ [bytes(64)]: 'x' }).ok).toBe(true);
  });
});
