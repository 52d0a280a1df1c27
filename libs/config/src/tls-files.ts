import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ConfigError } from './config.error';
import { type TallyConfig } from './tally.config';

const CERT = 'TALLY_TLS_CERT';
const KEY = 'TALLY_TLS_KEY';

/**
 * What is wrong with the TLS pair, one line per problem: both or neither, each a readable PEM file,
 * the key the certificate's. Checked at boot so a bad pair stops the app with a clear line instead of
 * a listener that fails on its first handshake. Lines name the paths, never the files' contents.
 */
export function tlsProblems(certPath: string | undefined, keyPath: string | undefined): string[] {
  if (certPath === undefined && keyPath === undefined) return [];
  if (certPath === undefined) return [`${CERT}: required when ${KEY} is set (both or neither)`];
  if (keyPath === undefined) return [`${KEY}: required when ${CERT} is set (both or neither)`];
  const cert = read(CERT, certPath, (pem) => new X509Certificate(pem), 'a PEM certificate');
  const key = read(KEY, keyPath, (pem) => createPrivateKey(pem), 'a PEM private key');
  if ('problem' in cert || 'problem' in key) {
    return [cert, key].flatMap((r) => ('problem' in r ? [r.problem] : []));
  }
  if (!cert.value.checkPrivateKey(key.value)) {
    return [`${KEY}: is not the private key of ${CERT} (got "${keyPath}")`];
  }
  return [];
}

function read<T>(
  variable: string,
  path: string,
  parse: (pem: Buffer) => T,
  what: string,
): { value: T } | { problem: string } {
  let pem: Buffer;
  try {
    pem = readFileSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    return { problem: `${variable}: cannot read the file (${code}) (got "${path}")` };
  }
  try {
    return { value: parse(pem) };
  } catch {
    return { problem: `${variable}: must be ${what} file (got "${path}")` };
  }
}

/** The PEM texts of `TALLY_TLS_CERT` and `TALLY_TLS_KEY`, as `tls.createSecureContext` takes them. */
export interface TlsFiles {
  readonly cert: Buffer;
  readonly key: Buffer;
}

/**
 * The certificate and key of the listeners (HTTP and gRPC share them), or `undefined` when TLS is
 * off. `loadConfig` has checked the pair (`tlsProblems`); a file changed since is a `ConfigError`
 * naming the setting, never a listener that fails at its first handshake.
 */
export function loadTlsFiles(config: Pick<TallyConfig, 'tlsCertPath' | 'tlsKeyPath'>): TlsFiles | undefined {
  const { tlsCertPath, tlsKeyPath } = config;
  if (tlsCertPath === undefined && tlsKeyPath === undefined) return undefined;
  const problems = tlsProblems(tlsCertPath, tlsKeyPath);
  if (problems.length > 0 || tlsCertPath === undefined || tlsKeyPath === undefined)
    throw new ConfigError(problems);
  return { cert: readFileSync(tlsCertPath), key: readFileSync(tlsKeyPath) };
}
