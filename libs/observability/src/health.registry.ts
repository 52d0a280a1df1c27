import { Injectable } from '@nestjs/common';
import type { Readiness, Wire } from '@tally/api-contract';

/** What one dependency says about itself (`/readyz`, defined by @tally/api-contract). */
export type ComponentHealth = Wire<Readiness['components'][string]>;
/** `degraded` = serving, but with reduced guarantees. */
export type ComponentStatus = ComponentHealth['status'];
export type OverallStatus = Readiness['status'];

export type HealthCheck = () => Promise<ComponentHealth> | ComponentHealth;

export type ReadinessReport = Wire<Readiness>;

/**
 * Readiness is the sum of the components an app depends on (Redis, Kafka, the policy set …).
 * Each app registers its own checks at boot; a check that throws or hangs counts as `down`,
 * so a wedged dependency can never make /readyz itself hang.
 */
@Injectable()
export class HealthRegistry {
  private readonly checks = new Map<string, HealthCheck>();

  register(name: string, check: HealthCheck): void {
    this.checks.set(name, check);
  }

  async report(timeoutMs = 1000): Promise<ReadinessReport> {
    const entries = await Promise.all(
      [...this.checks].map(async ([name, check]) => [name, await runCheck(check, timeoutMs)] as const),
    );
    const components = Object.fromEntries(entries);
    return { status: overall(entries.map(([, h]) => h.status)), components };
  }
}

/** The report without the components' details, for callers who are not the admin. */
export function statesOnly(report: ReadinessReport): ReadinessReport {
  const components: Record<string, ComponentHealth> = {};
  for (const [name, health] of Object.entries(report.components))
    components[name] = { status: health.status };
  return { status: report.status, components };
}

/** Any component down makes the app unavailable; any degraded makes it degraded. */
export function overall(statuses: readonly ComponentStatus[]): OverallStatus {
  if (statuses.includes('down')) return 'unavailable';
  if (statuses.includes('degraded')) return 'degraded';
  return 'healthy';
}

async function runCheck(check: HealthCheck, timeoutMs: number): Promise<ComponentHealth> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<ComponentHealth>((resolve) => {
    timer = setTimeout(
      () => resolve({ status: 'down', detail: `no answer within ${timeoutMs} ms` }),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([Promise.resolve().then(check), deadline]);
  } catch (error) {
    return { status: 'down', detail: error instanceof Error ? error.message : String(error) };
  } finally {
    clearTimeout(timer);
  }
}
