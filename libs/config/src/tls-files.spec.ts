import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeSelfSignedCert, type SelfSignedCert } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tlsProblems } from './tls-files';

describe(tlsProblems.name, () => {
  let pair: SelfSignedCert;
  let other: SelfSignedCert;
  let dir: string;
  let notPem: string;

  beforeAll(() => {
    pair = makeSelfSignedCert();
    other = makeSelfSignedCert();
    dir = mkdtempSync(join(tmpdir(), 'tally-tls-spec-'));
    notPem = join(dir, 'not-pem.txt');
    writeFileSync(notPem, 'hello');
  });
  afterAll(() => {
    pair.remove();
    other.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  it('accepts neither, and a readable matching pair', () => {
    expect(tlsProblems(undefined, undefined)).toEqual([]);
    expect(tlsProblems(pair.certPath, pair.keyPath)).toEqual([]);
  });

  it.each<{ case: string; files: () => [string | undefined, string | undefined]; problems: () => string[] }>([
    {
      case: 'a certificate alone',
      files: () => [pair.certPath, undefined],
      problems: () => ['TALLY_TLS_KEY: required when TALLY_TLS_CERT is set (both or neither)'],
    },
    {
      case: 'missing files, each named',
      files: () => [join(dir, 'nope.crt'), join(dir, 'nope.key')],
      problems: () => [
        `TALLY_TLS_CERT: cannot read the file (ENOENT) (got "${join(dir, 'nope.crt')}")`,
        `TALLY_TLS_KEY: cannot read the file (ENOENT) (got "${join(dir, 'nope.key')}")`,
      ],
    },
    {
      case: 'a directory',
      files: () => [dir, pair.keyPath],
      problems: () => [`TALLY_TLS_CERT: cannot read the file (EISDIR) (got "${dir}")`],
    },
    {
      case: 'files that are not PEM',
      files: () => [notPem, notPem],
      problems: () => [
        `TALLY_TLS_CERT: must be a PEM certificate file (got "${notPem}")`,
        `TALLY_TLS_KEY: must be a PEM private key file (got "${notPem}")`,
      ],
    },
    {
      case: 'the certificate and key swapped',
      files: () => [pair.keyPath, pair.certPath],
      problems: () => [
        `TALLY_TLS_CERT: must be a PEM certificate file (got "${pair.keyPath}")`,
        `TALLY_TLS_KEY: must be a PEM private key file (got "${pair.certPath}")`,
      ],
    },
    {
      case: "another certificate's key",
      files: () => [pair.certPath, other.keyPath],
      problems: () => [`TALLY_TLS_KEY: is not the private key of TALLY_TLS_CERT (got "${other.keyPath}")`],
    },
  ])('refuses $case', ({ files, problems }) => {
    const [cert, key] = files();

    expect(tlsProblems(cert, key)).toEqual(problems());
  });
});
