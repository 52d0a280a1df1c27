import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';

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
