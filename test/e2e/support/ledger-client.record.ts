/**
 * What the callers of the decision API saw: the client side of the ledger invariant. An allowed
 * decision with a cost is recorded once per decision id (a replay answers with the original id), so
 * the set of ids and the costs per tenant are what Kafka and the projection must hold, exactly.
 */

/** The body sent to `POST /v1/decisions`. */
export interface DecisionBody {
  readonly selectors: Readonly<Record<string, string>>;
  readonly attributes: Readonly<Record<string, string>>;
  readonly cost: number;
  readonly idempotency_key?: string;
}

/** The fields of the answer this suite reads. */
export interface DecisionAnswer {
  readonly allowed?: boolean;
  readonly decision_id?: string;
  readonly replayed?: boolean;
  readonly degraded?: boolean;
  readonly code?: string | null;
  readonly policies?: readonly { readonly name: string; readonly mode: string }[];
}

export interface ClientCounts {
  decisions: number;
  allowedWithCost: number;
  denied: number;
  replayed: number;
  conflicts: number;
  peeks: number;
  unmatched: number;
  fellThrough: number;
  /** Allowed decisions the attribute-keyed, prefix-matched (Envoy-style) policy counted. */
  envoyKeyed: number;
}

export class ClientRecord {
  /** Distinct decision id → tenant and cost of every allowed decision with cost > 0. */
  readonly allowed = new Map<string, { readonly tenant: string; readonly cost: number }>();
  /** Anything a correct API never answers here (5xx, degraded, an id seen with another cost). */
  readonly anomalies: string[] = [];
  /** Idempotency key → the id of its allowed decision: every later allowed answer must repeat it. */
  private readonly byKey = new Map<string, string>();
  readonly counts: ClientCounts = {
    decisions: 0,
    allowedWithCost: 0,
    denied: 0,
    replayed: 0,
    conflicts: 0,
    peeks: 0,
    unmatched: 0,
    fellThrough: 0,
    envoyKeyed: 0,
  };

  add(body: DecisionBody, status: number, answer: DecisionAnswer): void {
    this.counts.decisions++;
    const tenant = body.selectors.tenant ?? '';
    if (answer.replayed === true) this.counts.replayed++;
    if (status === 429) {
      this.counts.denied++;
      return;
    }
    if (status === 409 && answer.code === 'idempotency.conflict') {
      this.counts.conflicts++;
      return;
    }
    if (status !== 200 || answer.allowed !== true || answer.degraded === true || !answer.decision_id) {
      this.anomalies.push(`${status} ${JSON.stringify(answer).slice(0, 300)} for ${JSON.stringify(body)}`);
      return;
    }
    if (answer.policies?.length === 0) this.counts.unmatched++;
    if (answer.policies?.some((p) => p.name === 'ledger-tier-premium')) this.counts.fellThrough++;
    if (answer.policies?.some((p) => p.name === 'ledger-envoy-address')) this.counts.envoyKeyed++;
    if (body.cost === 0) {
      this.counts.peeks++;
      return;
    }
    if (body.idempotency_key !== undefined) {
      const first = this.byKey.get(body.idempotency_key) ?? answer.decision_id;
      this.byKey.set(body.idempotency_key, first);
      if (first !== answer.decision_id) {
        this.anomalies.push(`key ${body.idempotency_key} allowed twice: ${first} then ${answer.decision_id}`);
      }
    }
    const seen = this.allowed.get(answer.decision_id);
    if (seen === undefined) {
      this.allowed.set(answer.decision_id, { tenant, cost: body.cost });
      this.counts.allowedWithCost++;
    } else if (seen.tenant !== tenant || seen.cost !== body.cost) {
      this.anomalies.push(`decision ${answer.decision_id} answered for two different requests`);
    }
  }

  /** Sum of costs and number of distinct decisions per tenant. */
  totals(): Map<string, { cost: number; count: number }> {
    const totals = new Map<string, { cost: number; count: number }>();
    for (const { tenant, cost } of this.allowed.values()) {
      const t = totals.get(tenant) ?? { cost: 0, count: 0 };
      totals.set(tenant, { cost: t.cost + cost, count: t.count + 1 });
    }
    return totals;
  }
}
