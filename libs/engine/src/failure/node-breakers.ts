import { CircuitBreaker, type BreakerOptions, type BreakerState } from './circuit-breaker';

/** One Redis node's breaker, and when that node last answered anything (performance.now()). */
export interface NodeBreaker {
  /** The node (`host:port` of a Cluster master; `SINGLE_NODE` for a single Redis). */
  readonly node: string;
  readonly breaker: CircuitBreaker;
  /** Tells a slow node from a dead one (see `countsAsOutage`): only this node's answers count. */
  lastAnswerAt: number;
}

/** What the breakers of the serving nodes come to: the worst state, and how many are open. */
export interface BreakersSummary {
  readonly worst: BreakerState;
  readonly open: number;
  /** Every serving node's state (a node no step has gone to yet is `closed`). */
  readonly nodes: Readonly<Record<string, BreakerState>>;
  /** Whether a serving node's breaker counted failures lately (not yet open). */
  readonly failing: boolean;
}

/** The node name of a single Redis (no Cluster): one node, one breaker. */
export const SINGLE_NODE = 'redis';

const RECHECK_MS = 1000;

const SEVERITY: Readonly<Record<BreakerState, number>> = { closed: 0, half_open: 1, open: 2 };

/**
 * One circuit breaker per Redis node: a dead Cluster master fails its own slots' steps, so only its
 * breaker opens, and decisions whose shards live on the healthy masters keep being answered. A
 * breaker belongs to the node that served the step's slot when it started; after a failover the
 * slot map names the promoted replica, whose breaker is fresh. `serving` names the nodes that own
 * slots now: breakers of the others (a dead master whose slots moved) are dropped, so they neither
 * hold health down nor count in the summary.
 */
export class NodeBreakers {
  private readonly byNode = new Map<string, NodeBreaker>();
  private reported = { worst: 'closed' as BreakerState, open: 0 };
  /** While a breaker is reported not closed: the slot map is read again every second. */
  private recheck: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: BreakerOptions,
    private readonly clock: () => number,
    private readonly serving: () => readonly string[],
    /** The summary's worst state or open count changed. */
    private readonly onChange: (worst: BreakerState, open: number) => void = () => undefined,
  ) {}

  /** The node's breaker, created closed on first use. */
  of(node: string): NodeBreaker {
    let entry = this.byNode.get(node);
    if (entry === undefined) {
      entry = {
        node,
        breaker: new CircuitBreaker(this.options, this.clock, () => this.refresh()),
        lastAnswerAt: -Infinity,
      };
      this.byNode.set(node, entry);
    }
    return entry;
  }

  /** The serving nodes' breakers now. */
  summary(): BreakersSummary {
    const nodes: Record<string, BreakerState> = {};
    let worst: BreakerState = 'closed';
    let open = 0;
    let failing = false;
    for (const node of this.serving()) {
      const breaker = this.byNode.get(node)?.breaker;
      const state = breaker?.state ?? 'closed';
      nodes[node] = state;
      if (SEVERITY[state] > SEVERITY[worst]) worst = state;
      if (state === 'open') open++;
      if ((breaker?.consecutiveFailures ?? 0) > 0) failing = true;
    }
    return { worst, open, nodes, failing };
  }

  /**
   * Drops the breakers of nodes that serve no slot any more and reports a changed summary: called
   * when a breaker moves, when the client's slot map changed (a failover), and every second while
   * one is not closed (a client can move a slot to the promoted replica without a full refresh, and
   * nothing else would tell the metrics that the dead master's open breaker no longer counts).
   */
  refresh(): void {
    const serving = new Set(this.serving());
    for (const node of this.byNode.keys()) if (!serving.has(node)) this.byNode.delete(node);
    const { worst, open } = this.summary();
    if (worst === 'closed') {
      clearInterval(this.recheck);
      this.recheck = undefined;
    } else this.recheck ??= setInterval(() => this.refresh(), RECHECK_MS).unref();
    if (worst === this.reported.worst && open === this.reported.open) return;
    this.reported = { worst, open };
    this.onChange(worst, open);
  }
}
