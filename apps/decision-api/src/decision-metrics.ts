import { Inject, Injectable, Module, type OnModuleInit } from '@nestjs/common';
import {
  type BackendFailure,
  type BreakerState,
  type Decision,
  type DecisionObserver,
  type LocalFallbackOutcome,
  type OverrideCacheStats,
} from '@tally/engine';
import { METRICS_REGISTRY } from '@tally/observability';
import { PolicyStore, type ReloadResult } from '@tally/policy';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { decisionLabels, policyOutcome } from './decision-outcomes';

const BREAKER_VALUE: Record<BreakerState, number> = { closed: 0, half_open: 1, open: 2 };

/**
 * Prometheus series of the hot path. Labels are policy names and fixed vocabularies only — never a
 * selector value — so cardinality is bounded by the policy file.
 */
@Injectable()
export class DecisionMetrics implements DecisionObserver, OnModuleInit {
  private readonly decisions: Counter<'outcome' | 'reason'>;
  private readonly policyDecisions: Counter<'policy' | 'mode' | 'outcome'>;
  private readonly latency: Histogram;
  private readonly backendErrors: Counter<'reason'>;
  private readonly breaker: Gauge;
  private readonly breakersOpen: Gauge;
  private readonly reloads: Counter<'outcome' | 'trigger'>;
  private readonly policyVersion: Gauge<'version'>;
  private readonly degradedBuffered: Gauge;
  private readonly degradedDropped: Counter;
  private readonly localFallback: Counter<'policy' | 'outcome'>;
  private readonly localFallbackKeys: Gauge;
  private readonly overrideCacheAge: Gauge;
  private readonly overrideCacheEntries: Gauge;
  private readonly overrideCacheSkipped: Gauge<'kind'>;

  constructor(
    @Inject(METRICS_REGISTRY) registry: Registry,
    private readonly store: PolicyStore,
  ) {
    const registers = [registry];
    // Each decision once, as answered: its rate is the request rate, its denials the 429s.
    this.decisions = new Counter({
      name: 'tally_decisions_total',
      help: 'Decisions, each counted once, by outcome (allowed|denied|degraded|replayed|refused) and reason (deny reason, else degraded cause, else refusal code; "unmatched": allowed, no policy applied)',
      labelNames: ['outcome', 'reason'],
      registers,
    });
    // Each applicable policy of a decision once, with what that policy said (see decision-outcomes.ts).
    this.policyDecisions = new Counter({
      name: 'tally_policy_decisions_total',
      help: 'Applicable policies of decisions by policy, mode (enforce|shadow) and what the policy said (allowed|denied|denied_by_other|would_deny|degraded|replayed|refused)',
      labelNames: ['policy', 'mode', 'outcome'],
      registers,
    });
    this.latency = new Histogram({
      name: 'tally_decision_duration_seconds',
      help: 'Time to answer one decision (or one batch), validation and Redis step included',
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers,
    });
    this.backendErrors = new Counter({
      name: 'tally_backend_errors_total',
      help: 'Failed Redis steps by cause',
      labelNames: ['reason'],
      registers,
    });
    this.breaker = new Gauge({
      name: 'tally_breaker_state',
      help: 'Circuit breakers in front of Redis, one per node serving slots, the worst: 0 closed, 1 half-open, 2 open',
      // With several workers (TALLY_WORKERS), /metrics shows the worst breaker, not a meaningless sum.
      aggregator: 'max',
      registers,
    });
    this.breaker.set(BREAKER_VALUE.closed);
    this.breakersOpen = new Gauge({
      name: 'tally_breaker_open_nodes',
      help: "Redis nodes whose circuit breaker is open: their shards' decisions run on their fail modes",
      aggregator: 'max',
      registers,
    });
    this.breakersOpen.set(0);
    this.reloads = new Counter({
      name: 'tally_policy_reloads_total',
      help: 'Policy reloads by outcome (applied|unchanged|rejected) and trigger (file|request)',
      labelNames: ['outcome', 'trigger'],
      registers,
    });
    this.policyVersion = new Gauge({
      name: 'tally_policy_set_info',
      help: 'The policy set in force (value 1, version label)',
      labelNames: ['version'],
      // Still 1 per version in force with several workers (a sum would count the workers).
      aggregator: 'max',
      registers,
    });
    this.degradedBuffered = new Gauge({
      name: 'tally_degraded_ledger_buffered',
      help: 'Degraded (fail_open) decisions waiting in memory for Redis to take their outbox entries',
      registers,
    });
    this.degradedDropped = new Counter({
      name: 'tally_degraded_ledger_dropped_total',
      help: 'Degraded decisions whose ledger entry was dropped because the buffer was full',
      registers,
    });
    this.localFallback = new Counter({
      name: 'tally_local_fallback_decisions_total',
      help: 'Decisions of local_fallback policies made from in-process counters while Redis failed, by policy and outcome (allowed|denied|blocked|overflow_open|overflow_closed)',
      labelNames: ['policy', 'outcome'],
      registers,
    });
    this.localFallbackKeys = new Gauge({
      name: 'tally_local_fallback_keys',
      help: 'Keys the local fallback limiter holds in memory (bounded by TALLY_LOCAL_FALLBACK_MAX_KEYS per worker)',
      registers,
    });
    // The copy of the overrides applied while Redis fails: with several workers, the stalest/largest.
    this.overrideCacheAge = new Gauge({
      name: 'tally_override_cache_age_seconds',
      help: 'Since the last complete read of the overrides into this process copy (applied while Redis fails); grows while Redis does not answer',
      aggregator: 'max',
      registers,
    });
    this.overrideCacheEntries = new Gauge({
      name: 'tally_override_cache_entries',
      help: 'Overrides held in the process copy (bounded by TALLY_OVERRIDE_CACHE_MAX_ENTRIES per worker)',
      aggregator: 'max',
      registers,
    });
    this.overrideCacheSkipped = new Gauge({
      name: 'tally_override_cache_skipped',
      help: 'Overrides in Redis the process copy does not hold, its bound being reached, by kind (block|limit): they do not apply while Redis fails',
      labelNames: ['kind'],
      aggregator: 'max',
      registers,
    });
  }

  onModuleInit(): void {
    this.policyVersion.set({ version: this.store.current.version }, 1);
    this.store.onReload((result, trigger) => this.onReload(result, trigger));
  }

  onDecision(decision: Decision, latencyMs: number): void {
    this.latency.observe(latencyMs / 1000);
    this.decisions.inc(decisionLabels(decision));
    for (const policy of decision.policies)
      this.policyDecisions.inc({
        policy: policy.name,
        mode: policy.mode,
        outcome: policyOutcome(decision, policy),
      });
  }

  onBackendError(reason: BackendFailure): void {
    this.backendErrors.inc({ reason });
  }

  onDegradedBuffered(size: number): void {
    this.degradedBuffered.set(size);
  }

  onDegradedDropped(n: number): void {
    this.degradedDropped.inc(n);
  }

  onLocalFallback(policy: string, outcome: LocalFallbackOutcome, keys: number): void {
    this.localFallback.inc({ policy, outcome });
    this.localFallbackKeys.set(keys);
  }

  onOverrideCache(stats: OverrideCacheStats): void {
    // Never read yet: no finite age to show; the largest a gauge holds says "as stale as it gets".
    this.overrideCacheAge.set(Number.isFinite(stats.ageMs) ? stats.ageMs / 1000 : Number.MAX_VALUE);
    this.overrideCacheEntries.set(stats.entries);
    this.overrideCacheSkipped.set({ kind: 'block' }, stats.skipped.blocks);
    this.overrideCacheSkipped.set({ kind: 'limit' }, stats.skipped.limits);
  }

  onBreaker(state: BreakerState, openNodes: number): void {
    this.breaker.set(BREAKER_VALUE[state]);
    this.breakersOpen.set(openNodes);
  }

  private onReload(result: ReloadResult, trigger: 'file' | 'request'): void {
    if (!result.ok) {
      this.reloads.inc({ outcome: 'rejected', trigger });
      return;
    }
    this.reloads.inc({ outcome: result.changed ? 'applied' : 'unchanged', trigger });
    if (result.changed) {
      this.policyVersion.reset();
      this.policyVersion.set({ version: result.version }, 1);
    }
  }
}

/** Its own module: the engine imports the observer, so the observer must not need the engine. */
@Module({ providers: [DecisionMetrics], exports: [DecisionMetrics] })
export class DecisionMetricsModule {}
