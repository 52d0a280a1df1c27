/**
 * A paced, seeded stream of mixed decisions over HTTP: several tenants, routes that two enforce
 * policies, a tier group (whose first, disabled policy falls through) and a shadow policy match, an
 * unmatched route, an attribute-keyed policy with a prefix match (an Envoy rule), cost-0 peeks, varied costs, idempotent retries (sequential and concurrent) and
 * idempotency conflicts. Limits are tight enough that a good share is denied.
 */
import { eventually, seededRandom, sleep } from '@tally/testing';
import { ClientRecord, type DecisionAnswer, type DecisionBody } from './ledger-client.record';

export const LEDGER_POLICIES = `
policies:
  - name: ledger-principal
    match: { route: [read, write] }
    key: [tenant, principal]
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 150, period: 1h }
    max_cost: 10
  - name: ledger-tenant
    match: { route: [read, write] }
    key: [tenant]
    windows:
      - { name: burst, role: burst, algorithm: token_bucket, limit: 400, period: 1s }
      - { name: hourly, role: sustained, algorithm: sliding_window, limit: 2500, period: 1h }
  - name: ledger-tier-legacy
    group: tier
    enabled: false
    match: { plan: premium }
    key: [tenant]
    windows: [{ name: hourly, role: sustained, algorithm: fixed_window, limit: 1000, period: 1h }]
  - name: ledger-tier-premium
    group: tier
    match: { plan: premium, route: [read, write] }
    key: [tenant, client]
    windows: [{ name: minute, role: sustained, algorithm: token_bucket, limit: 300, period: 1m }]
  - name: ledger-tier-basic
    group: tier
    match: { route: [read, write] }
    key: [tenant, client]
    windows: [{ name: hourly, role: sustained, algorithm: fixed_window, limit: 350, period: 1h }]
  - name: ledger-shadow
    mode: shadow
    match: { route: [read, write] }
    key: [tenant, client]
    windows: [{ name: burst, role: burst, algorithm: token_bucket, limit: 20, period: 1s }]
  # As \`tally policy import-envoy\` writes an Envoy rule keyed by a descriptor's own entries: a counter
  # per (non-selector) remote_address, for the paths of a wildcard value \`/api/*\`.
  - name: ledger-envoy-address
    match_prefix: { path: [/api/] }
    key: [remote_address]
    windows: [{ name: minute, role: sustained, algorithm: fixed_window, limit: 100, period: 1m }]
`;

export interface WorkloadOptions {
  readonly baseUrl: string;
  readonly token: string;
  readonly tenants: readonly string[];
  readonly seed: number;
  /** Decisions per second. */
  readonly rate: number;
  readonly concurrency?: number;
}

/** A running workload, from construction until `stop`; `record` is what the callers saw. */
export class Workload {
  readonly record = new ClientRecord();
  private readonly random: () => number;
  private readonly keyed: DecisionBody[] = [];
  private sent = 0;
  private stopped = false;
  private readonly workers: Promise<void>[];
  private readonly startedAt = performance.now();

  constructor(private readonly options: WorkloadOptions) {
    this.random = seededRandom(options.seed);
    this.workers = Array.from({ length: options.concurrency ?? 16 }, () => this.work());
  }

  get decisions(): number {
    return this.record.counts.decisions;
  }

  /** Resolves once at least `n` decisions were answered; fails rather than wait on a dead API. */
  async reached(n: number, timeoutMs = 90_000): Promise<void> {
    await eventually(
      () => this.decisions,
      (answered) => answered >= n,
      { timeoutMs, intervalMs: 20 },
    ).catch(() => {
      const last = this.record.anomalies.at(-1) ?? 'none';
      throw new Error(
        `${this.decisions} of ${n} decisions answered in ${timeoutMs} ms; last anomaly: ${last}`,
      );
    });
  }

  /** Waits for the requests in flight; `record` is final afterwards. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.workers);
  }

  private async work(): Promise<void> {
    while (!this.stopped) {
      const due = this.startedAt + (this.sent++ * 1000) / this.options.rate;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      const pick = this.random();
      const old = this.keyed[Math.floor(this.random() * this.keyed.length)];
      if (old !== undefined && pick < 0.1) await this.send(old);
      else if (old !== undefined && pick < 0.14) await Promise.all([this.send(old), this.send(old)]);
      else if (old !== undefined && pick < 0.16) await this.send({ ...old, cost: old.cost + 1 });
      else await this.send(this.fresh());
    }
  }

  private fresh(): DecisionBody {
    const r = this.random;
    const t = Math.floor(r() * this.options.tenants.length);
    const routeDraw = r();
    const costDraw = r();
    const body: DecisionBody = {
      selectors: {
        tenant: this.options.tenants[t] ?? '',
        principal: `p${Math.floor(r() * 6)}`,
        client: `c${Math.floor(r() * 3)}`,
        route: routeDraw < 0.45 ? 'read' : routeDraw < 0.87 ? 'write' : 'health',
      },
      attributes: { plan: t % 2 === 0 ? 'premium' : 'basic' },
      cost: costDraw < 0.1 ? 0 : costDraw < 0.15 ? 8 : 1 + Math.floor(r() * 5),
    };
    const route = body.selectors.route;
    const envoy: DecisionBody = {
      ...body,
      attributes: {
        ...body.attributes,
        path: route === 'health' ? '/health' : `/api/${route}`,
        remote_address: `198.51.100.${Math.floor(r() * 4)}`,
      },
    };
    if (r() >= 0.35) return envoy;
    const keyed = { ...envoy, idempotency_key: `k-${this.options.seed}-${this.sent}-${t}` };
    this.keyed.push(keyed);
    return keyed;
  }

  private async send(body: DecisionBody): Promise<void> {
    try {
      const res = await fetch(`${this.options.baseUrl}/v1/decisions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${this.options.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      this.record.add(body, res.status, (await res.json()) as DecisionAnswer);
    } catch (error) {
      // The caller cannot know whether this decision was taken: the invariant would be unknowable.
      this.record.anomalies.push(`request failed: ${String(error)}`);
    }
  }
}
