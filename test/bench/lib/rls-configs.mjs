// The limits both sides of the RLS bench enforce, written once as an envoyproxy/ratelimit
// configuration and converted into Tally's policy file by `tally policy import-envoy` (the migration
// path an operator takes). Limits are far above what the bench can send, so every call is allowed and
// both sides do the same work per descriptor: one fixed-window counter read and incremented.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DIST } from './built.mjs';

const HIGH = 1_000_000_000; // requests_per_unit is a uint32: high, not unbounded.

/** gRPC cases: domain `bench`, four rules under `tenant` (each descriptor of a call matches one). */
export const GRPC_DOMAIN = 'bench';
/** HTTP case: domain `http`, one rule (POST /v1/decisions matches policies by subset, RLS by whole descriptor). */
export const HTTP_DOMAIN = 'http';

export const PEER_CONFIGS = {
  [GRPC_DOMAIN]: `domain: ${GRPC_DOMAIN}
descriptors:
  - key: tenant
    rate_limit: { unit: second, requests_per_unit: ${HIGH} }
    descriptors:
      - key: route
        value: evaluate
        rate_limit: { unit: minute, requests_per_unit: ${HIGH} }
      - key: principal
        rate_limit: { unit: minute, requests_per_unit: ${HIGH} }
      - key: client
        rate_limit: { unit: hour, requests_per_unit: ${HIGH} }
`,
  [HTTP_DOMAIN]: `domain: ${HTTP_DOMAIN}
descriptors:
  - key: tenant
    rate_limit: { unit: second, requests_per_unit: ${HIGH} }
`,
};

/** The descriptors of one call: 1 = the tenant rule; 4 = one per rule, all of one tenant. */
export function descriptors(count, tenant) {
  const entries = [
    [{ key: 'tenant', value: tenant }],
    [
      { key: 'tenant', value: tenant },
      { key: 'route', value: 'evaluate' },
    ],
    [
      { key: 'tenant', value: tenant },
      { key: 'principal', value: 'svc-42' },
    ],
    [
      { key: 'tenant', value: tenant },
      { key: 'client', value: 'mobile' },
    ],
  ];
  return entries.slice(0, count).map((e) => ({ entries: e }));
}

/**
 * Writes the peer's runtime folder (`<dir>/peer/ratelimit/config/<domain>.yaml`, what its file loader
 * reads) and Tally's policy file converted from the same YAML. Returns both paths.
 */
export function writeConfigs(dir) {
  const runtimeRoot = join(dir, 'peer');
  const configDir = join(runtimeRoot, 'ratelimit', 'config');
  mkdirSync(configDir, { recursive: true });
  for (const [domain, yaml] of Object.entries(PEER_CONFIGS))
    writeFileSync(join(configDir, `${domain}.yaml`), yaml);
  // import-envoy takes several domains as one file of `---`-separated documents.
  const envoyYaml = join(dir, 'envoy-ratelimit.yaml');
  writeFileSync(envoyYaml, Object.values(PEER_CONFIGS).join('---\n'));
  const policies = join(dir, 'rls-policies.yaml');
  execFileSync(
    process.execPath,
    [join(DIST, 'apps/cli/src/main.js'), 'policy', 'import-envoy', envoyYaml, '--out', policies],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return { runtimeRoot, envoyYaml, policies };
}
