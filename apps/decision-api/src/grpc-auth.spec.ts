import { describe, expect, it } from 'vitest';
import { GrpcCallerAuth } from './grpc-auth';

const CALLER = 'caller-token-0123456789';
const OTHER = 'other-caller-token-0123';
const ADMIN = 'admin-token-0123456789';

describe(GrpcCallerAuth.name, () => {
  const sut = new GrpcCallerAuth({ auth: 'bearer', callerTokens: [CALLER, OTHER], adminToken: ADMIN });

  it.each<{ case: string; values: (string | Buffer)[]; allowed: boolean }>([
    { case: 'a caller token', values: [`Bearer ${CALLER}`], allowed: true },
    { case: 'the second caller token', values: [`Bearer ${OTHER}`], allowed: true },
    { case: 'the admin token', values: [`Bearer ${ADMIN}`], allowed: true },
    { case: 'a lower-case scheme and trailing space', values: [`bearer ${CALLER} `], allowed: true },
    { case: 'no metadata', values: [], allowed: false },
    { case: 'an unknown token', values: ['Bearer nope-nope-nope-nope'], allowed: false },
    { case: 'a prefix of a token', values: [`Bearer ${CALLER.slice(0, -1)}`], allowed: false },
    { case: 'a token without the scheme', values: [CALLER], allowed: false },
    { case: 'another scheme', values: [`Basic ${CALLER}`], allowed: false },
    { case: 'binary metadata', values: [Buffer.from(`Bearer ${CALLER}`)], allowed: false },
    {
      case: 'a good token after a bad first value',
      values: ['Bearer bad', `Bearer ${CALLER}`],
      allowed: false,
    },
  ])('$case → $allowed', ({ values, allowed }) => {
    expect(sut.allows(values)).toBe(allowed);
  });

  it('lets every call through with TALLY_AUTH=none', () => {
    const open = new GrpcCallerAuth({ auth: 'none', callerTokens: [] });

    expect(open.allows([])).toBe(true);
  });
});
