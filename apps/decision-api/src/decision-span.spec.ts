import { getHeapSpaceStatistics } from 'node:v8';
import { SpanKind, TraceFlags, type Span } from '@opentelemetry/api';
import type { Decision } from '@tally/engine';
import { Tracing } from '@tally/observability';
import { describe, expect, it } from 'vitest';
import { traceDecisions } from './decision-span';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

/** A span that records what is set on it (the SDK's own are exported, not inspectable). */
function recordingSpan(sampled = true) {
  const attributes: Record<string, unknown> = {};
  const state = { ended: false, status: undefined as unknown };
  const span = {
    spanContext: () => ({
      traceId: TRACE,
      spanId: 'b7ad6b7169203331',
      traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
    }),
    setAttribute: (k: string, v: unknown) => ((attributes[k] = v), span),
    setStatus: (s: unknown) => ((state.status = s), span),
    end: () => void (state.ended = true),
  };
  return { span: span as unknown as Span, attributes, state };
}

function tracingWith(span: Span): { tracing: Tracing; starts: unknown[][] } {
  const starts: unknown[][] = [];
  const tracing = {
    enabled: true,
    start: (...args: unknown[]) => (starts.push(args), span),
  } as unknown as Tracing;
  return { tracing, starts };
}

const decision = (id: string, kind: Decision['kind'], policies: string[]): Decision =>
  ({ decision_id: id, kind, policies: policies.map((name) => ({ name })) }) as unknown as Decision;

const CALL = {
  transport: 'http',
  traceparent: `00-${TRACE}-00f067aa0ba902b7-01`,
  requestId: 'r-1',
  tenant: 'acme',
} as const;

describe(traceDecisions.name, () => {
  it('costs nothing when tracing is off: start allocates no byte, decide gets no context', async () => {
    // given tracing off, as the hot path sees it
    const sut = Tracing.off();
    const header: unknown = CALL.traceparent;

    // when the hot path's check runs many times (measured in windows no scavenge interrupted: one
    // would shrink the new space and hide what the window allocated)
    const used = () =>
      getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_used_size ?? 0;
    const calls = 20_000; // reading the statistics allocates ≈ 3 KB itself: far below a byte per call
    let started = 0;
    const grown: number[] = [];
    for (let attempt = 0; attempt < 20 && grown.length < 3; attempt++) {
      const before = used();
      for (let i = 0; i < calls; i++)
        if (sut.start('tally.decide', SpanKind.SERVER, header as string)) started++;
      const after = used();
      if (after >= before) grown.push(after - before);
    }

    // then nothing was started, and no window grew by a byte per call
    expect(started).toBe(0);
    expect(sut.enabled).toBe(false);
    expect(grown.length).toBeGreaterThan(0);
    expect(Math.min(...grown)).toBeLessThan(calls);
    const args: unknown[][] = [];
    await traceDecisions(
      sut,
      CALL,
      (...a: unknown[]) => (args.push(a), Promise.resolve(decision('d', 'allowed', []))),
    );
    expect(args).toEqual([[]]);
  });

  it("starts a SERVER span under the caller's traceparent and hands decide the span's own", async () => {
    const { span, attributes, state } = recordingSpan();
    const { tracing, starts } = tracingWith(span);
    const seen: (string | undefined)[] = [];

    const result = await traceDecisions(tracing, CALL, (tp) => {
      seen.push(tp);
      return Promise.resolve(decision('01JD1', 'allowed', ['api', 'trial']));
    });

    expect(result.decision_id).toBe('01JD1');
    expect(starts).toEqual([['tally.decide', SpanKind.SERVER, CALL.traceparent]]);
    expect(seen).toEqual([`00-${TRACE}-b7ad6b7169203331-01`]);
    expect(attributes).toEqual({
      'tally.transport': 'http',
      'tally.request_id': 'r-1',
      'tally.tenant': 'acme',
      'tally.decision_count': 1,
      'tally.decision_ids': ['01JD1'],
      'tally.outcomes': ['allowed'],
      'tally.policies': ['api', 'trial'],
      'tally.decision_id': '01JD1',
      'tally.outcome': 'allowed',
    });
    expect(state.ended).toBe(true);
  });

  it('hands decide nothing when the span is not sampled: unsampled decisions write no trace field', async () => {
    const { span } = recordingSpan(false);
    const seen: (string | undefined)[] = [];
    await traceDecisions(tracingWith(span).tracing, CALL, (tp) => {
      seen.push(tp);
      return Promise.resolve([decision('a', 'denied', ['p']), null]);
    });
    expect(seen).toEqual([undefined]);
  });

  it('ends the span as failed when deciding throws, and rethrows', async () => {
    const { span, state } = recordingSpan();
    const sut = traceDecisions(tracingWith(span).tracing, CALL, () => Promise.reject(new Error('bug')));
    await expect(sut).rejects.toThrow('bug');
    expect(state).toMatchObject({ ended: true, status: { code: 2, message: 'bug' } });
  });
});
