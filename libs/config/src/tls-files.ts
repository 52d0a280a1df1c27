import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ConfigError } from './config.error';
import { type TallyConfig } from './tally.config';

/** The PEM texts of `TALLY_TLS_CERT` and `TALLY_TLS_KEY`, as `tls.createSecureContext` takes them. */
export interface TlsFiles {
  readonly cert: Buffer;
  readonly key: Buffer;
}

/**
 * Reads the TLS certificate and key of the listeners (HTTP and gRPC share them), or `undefined` when
 * TLS is off. Called at boot, before anything listens: an unreadable file, a file that is not PEM, or
 * a key that is not the certificate's is a `ConfigError` naming the setting, so a bad deployment
 * fails at once instead of at the first handshake. The key's content is never echoed.
 */
export function loadTlsFiles(config: Pick<TallyConfig, 'tlsCertPath' | 'tlsKeyPath'>): TlsFiles | undefined {
  const { tlsCertPath, tlsKeyPath } = config;
  if (tlsCertPath === undefined || tlsKeyPath === undefined) return undefined;
  const problems: string[] = [];
  const cert = read('TALLY_TLS_CERT', tlsCertPath, problems);
  const key = read('TALLY_TLS_KEY', tlsKeyPath, problems);
  let certificate: X509Certificate | undefined;
  let privateKey: KeyObject | undefined;
  if (cert) {
    try {
      certificate = new X509Certificate(cert);
    } catch {
      problems.push(`TALLY_TLS_CERT: ${JSON.stringify(tlsCertPath)} is not a PEM certificate`);
    }
  }
  if (key) {
    try {
      privateKey = createPrivateKey(key);
    } catch {
      problems.push(`TALLY_TLS_KEY: ${JSON.stringify(tlsKeyPath)} is not an unencrypted PEM private key`);
    }
  }
  if (certificate && privateKey && !certificate.checkPrivateKey(privateKey)) {
    problems.push(`TALLY_TLS_KEY: is not the private key of the certificate in TALLY_TLS_CERT`);
  }
  if (problems.length > 0 || !cert || !key) throw new ConfigError(problems);
  return { cert, key };
}

function read(variable: string, path: string, problems: string[]): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    problems.push(`${variable}: cannot read ${JSON.stringify(path)} (${code})`);
    return undefined;
  }
}
