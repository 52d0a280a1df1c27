import cluster, { type Worker } from 'node:cluster';
import { CLUSTER_ASK_TIMEOUT_MS } from './cluster.messages';

/** A worker that gave no answer: late, or dead before it answered. */
export interface Unanswered {
  readonly pid: number;
}

interface Pending<R> {
  readonly asker: Worker;
  readonly askerId: number;
  readonly waitingFor: Set<number>;
  readonly results: R[];
  readonly timer: NodeJS.Timeout;
}

/**
 * One kind of question the primary puts to every live worker for the worker that asked it (a shared
 * reload, a gather): answers are collected until every asked worker has answered or exited, or
 * CLUSTER_ASK_TIMEOUT_MS has passed; then `done` gets them, the late and the dead as `{ pid }` without
 * a result, so the asker never reports a worker it did not hear from as done.
 */
export class WorkerAsks<R> {
  private readonly pending = new Map<number, Pending<R>>();
  private nextId = 0;

  constructor(private readonly done: (asker: Worker, askerId: number, results: (R | Unanswered)[]) => void) {}

  /** Asks every live worker: `run` sends one the question under this ask's own `id`. */
  start(asker: Worker, askerId: number, run: (worker: Worker, id: number) => void): void {
    const id = this.nextId++;
    const live = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w?.isConnected() === true);
    this.pending.set(id, {
      asker,
      askerId,
      waitingFor: new Set(live.map((w) => w.id)),
      results: [],
      timer: setTimeout(() => this.finish(id), CLUSTER_ASK_TIMEOUT_MS),
    });
    for (const w of live) run(w, id);
  }

  answer(worker: Worker, id: number, result: R): void {
    const pending = this.pending.get(id);
    if (pending === undefined) return;
    pending.results.push(result);
    pending.waitingFor.delete(worker.id);
    if (pending.waitingFor.size === 0) this.finish(id);
  }

  /** A worker that exited answers nothing: no ask waits for it any longer. */
  exited(workerId: number): void {
    for (const [id, pending] of this.pending)
      if (pending.waitingFor.delete(workerId) && pending.waitingFor.size === 0) this.finish(id);
  }

  private finish(id: number): void {
    const pending = this.pending.get(id);
    if (pending === undefined) return;
    this.pending.delete(id);
    clearTimeout(pending.timer);
    const missing = [...pending.waitingFor].map((wid) => ({ pid: cluster.workers?.[wid]?.process.pid ?? 0 }));
    this.done(pending.asker, pending.askerId, [...pending.results, ...missing]);
  }
}
