import { describe, expect, it } from 'vitest';
import { type Access } from './access.decorator';
import { BearerTokens } from './bearer-tokens';

describe(BearerTokens.name, () => {
  const sut = new BearerTokens({
    auth: 'bearer',
    callerTokens: ['caller-a', 'caller-b'],
    adminToken: 'admin-x',
  });

  it.each([
    ['caller', undefined, 401, 'auth.missing'],
    ['caller', 'Basic Y2FsbGVyLWE=', 401, 'auth.missing'],
    ['caller', 'Bearer caller-c', 401, 'auth.invalid'],
    ['caller', 'Bearer caller-', 401, 'auth.invalid'],
    ['caller', 'Bearer caller-b', undefined, undefined],
    ['caller', 'bearer   caller-a  ', undefined, undefined],
    ['caller', ['Bearer caller-a', 'Bearer other'], undefined, undefined],
    ['caller', 'Bearer admin-x', undefined, undefined],
    ['admin', 'Bearer caller-a', 403, 'auth.forbidden'],
    ['admin', undefined, 401, 'auth.missing'],
    ['admin', 'Bearer admin-x', undefined, undefined],
    ['public', undefined, undefined, undefined],
  ] as [Access, string | string[] | undefined, number | undefined, string | undefined][])(
    '%s access with %j → %s %s',
    (access, header, status, code) => {
      const refusal = sut.refusal(header, access);

      expect(refusal?.getStatus()).toBe(status);
      expect((refusal?.getResponse() as { code?: string } | undefined)?.code).toBe(code);
    },
  );

  it('lets everything through with auth none', () => {
    const open = new BearerTokens({ auth: 'none', callerTokens: [] });

    expect(open.refusal(undefined, 'admin')).toBeUndefined();
  });
});
