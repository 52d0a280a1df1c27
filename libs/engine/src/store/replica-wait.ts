import type { ScriptOutcome } from '../decide.script';

/**
 * Durable mode (`TALLY_REDIS_WAIT_REPLICAS` > 0): a decision is answered only after its writes reached
 * `replicas` replicas of the master that ran it. Redis replicates asynchronously, so without it a
 * master that dies right after answering can take an allowed decision (window counters and outbox
 * entry) with it; `WAIT replicas timeoutMs`, pipelined right after the script on the same connection,
 * makes Redis report how many replicas acknowledged everything that connection wrote so far.
 */
export interface ReplicaWait {
  /** Replicas that must acknowledge an allowed decision's writes (1 with one replica per master). */
  readonly replicas: number;
  /** How long Redis waits for them (WAIT's timeout; never 0, which would wait forever). */
  readonly timeoutMs: number;
}

/**
 * Whether a script's answer must be refused because too few replicas acknowledged it. Every allowed
 * answer is held back: a fresh allowed decision, whose writes are the ledger (counters, outbox entry,
 * idempotency record), and a replay, which answers "allowed" for writes an earlier step made and
 * which may still be on the master alone (that step fell short, the caller retried with its key, as
 * a 503 invites). A denial spent nothing (its coalesced denial record may be lost with the master);
 * a peek and a conflict wrote nothing and answer nothing allowed. The refused decision is then a
 * `backend_timeout` under its policy's fail mode, with a timeout's meaning (ADR 0001): the write
 * exists on the master and may survive it (a later failover can still drop it), exactly like a
 * script that committed after its deadline; under fail_open the degraded entry carries the same
 * decision id, so the projector counts it once either way (a replay's answer is the stored decision,
 * degraded: see `DecisionService`).
 */
export function fallsShort(outcome: ScriptOutcome, acknowledged: number, wait: ReplicaWait): boolean {
  return (outcome.kind === 'allowed' || outcome.kind === 'replayed') && acknowledged < wait.replicas;
}
