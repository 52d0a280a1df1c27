import { Parser } from '@asyncapi/parser';
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { asyncApiDocument } from './asyncapi';

/** DiagnosticSeverity.Error (spectral's enum: 0 = error, 1 = warning, …). */
const ERROR = 0;
const FILE = resolve(__dirname, '../../../docs/contracts/asyncapi.json');
/**
 * The parser loads and runs its whole Spectral ruleset: ≈ 1 s on an idle machine, over 5 s (vitest's
 * default) with the suite's other files and two busy cores beside it.
 */
const PARSE_TIMEOUT_MS = 60_000;

describe(asyncApiDocument.name, () => {
  it(
    'is a valid AsyncAPI 3.0 document (the official parser, no error diagnostics)',
    async () => {
      const { document, diagnostics } = await new Parser().parse(JSON.stringify(asyncApiDocument()));
      const errors = diagnostics
        .filter((d) => Number(d.severity) === ERROR)
        .map((d) => `${d.path.join('.')}: ${d.message}`);
      expect(errors).toEqual([]);
      expect(
        document
          ?.channels()
          .all()
          .map((c) => c.address()),
      ).toEqual([
        'tally.usage.v1',
        'tally.decision.v2',
        'tally.decision.v1',
        'tally.lease.v1',
        'tally.dlq.v1',
      ]);
    },
    PARSE_TIMEOUT_MS,
  );

  it('publishes denials as tally.decision.v2 and keeps tally.decision.v1 only as history to read', () => {
    const operations = asyncApiDocument().operations as Record<string, { action: string; channel: object }>;
    const sends = Object.values(operations).filter((o) => o.action === 'send');
    expect(sends.map((o) => o.channel)).not.toContainEqual({ $ref: '#/channels/decisionV1' });
    expect(operations.sendDecision?.channel).toEqual({ $ref: '#/channels/decision' });
    expect(operations.receiveDecisionV1?.action).toBe('receive');
  });

  it('names the retention that keeps the ledger forever', () => {
    const channels = asyncApiDocument().channels as Record<string, { bindings: { kafka: object } }>;
    expect(channels.usage?.bindings.kafka).toMatchObject({ topicConfiguration: { 'retention.ms': -1 } });
    expect(channels.decision?.bindings.kafka).not.toHaveProperty('topicConfiguration');
  });

  it('is committed as generated (TALLY_WRITE_CONTRACTS=1 rewrites it)', () => {
    const generated = asyncApiDocument();
    if (process.env.TALLY_WRITE_CONTRACTS === '1')
      writeFileSync(FILE, `${JSON.stringify(generated, null, 2)}\n`);
    expect(JSON.parse(readFileSync(FILE, 'utf8'))).toEqual(generated);
  });
});
