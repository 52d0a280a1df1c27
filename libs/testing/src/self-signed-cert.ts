import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A certificate made for one test run: nothing secret is kept in the repository. */
export interface SelfSignedCert {
  readonly certPath: string;
  readonly keyPath: string;
  /** The certificate itself, for a client that trusts exactly it. */
  readonly certPem: Buffer;
  /** Removes the files. */
  remove(): void;
}

/**
 * `openssl req -x509` with a P-256 key for `localhost` and 127.0.0.1, valid one day, in a fresh
 * temporary directory. Needs the `openssl` command (Debian's openssl package).
 */
export function makeSelfSignedCert(): SelfSignedCert {
  const dir = mkdtempSync(join(tmpdir(), 'tally-tls-'));
  const certPath = join(dir, 'tls.crt');
  const keyPath = join(dir, 'tls.key');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
      '-keyout',
      keyPath,
      '-out',
      certPath,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return {
    certPath,
    keyPath,
    certPem: readFileSync(certPath),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
