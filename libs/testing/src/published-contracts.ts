import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** The published documents: this file is libs/testing/src/published-contracts.ts. */
const CONTRACTS = resolve(__dirname, '../../../docs/contracts');

/**
 * Checks what the suites read back from Kafka against the JSON Schema documents committed under
 * docs/contracts/, as another team's tools would: a plain ajv with the standard formats, none of
 * Tally's code. Returns the problems of one record (none when it conforms) so a consumer callback
 * can collect them and the test assert on the list.
 */
export class PublishedContracts {
  private readonly validators = new Map<string, ValidateFunction>();

  constructor() {
    const ajv = new Ajv({ allErrors: true, strictRequired: false });
    addFormats(ajv);
    for (const file of [
      'tally.usage.v1.event.schema.json',
      'tally.usage.v1.data.schema.json',
      'tally.decision.v1.event.schema.json',
      'tally.decision.v1.data.schema.json',
      'tally.decision.v2.event.schema.json',
      'tally.decision.v2.data.schema.json',
      'tally.lease.v1.event.schema.json',
      'tally.lease.v1.data.schema.json',
      'tally.override.v1.event.schema.json',
      'tally.override.v1.data.schema.json',
      'tally.dlq.v1.headers.schema.json',
    ]) {
      this.validators.set(
        file,
        ajv.compile(JSON.parse(readFileSync(resolve(CONTRACTS, file), 'utf8')) as object),
      );
    }
  }

  /** Problems of one event record (structured mode: its value is the whole event). */
  eventProblems(value: string, headers: Readonly<Record<string, string | undefined>> = {}): string[] {
    let event: { type?: unknown; id?: unknown; data?: unknown };
    try {
      event = JSON.parse(value) as typeof event;
    } catch {
      return [`not JSON: ${value.slice(0, 80)}`];
    }
    const where = `${String(event.type)} ${String(event.id)}`;
    const type = String(event.type);
    const problems = [
      ...this.check(`${type}.event.schema.json`, event, where),
      ...this.check(`${type}.data.schema.json`, event.data, where),
    ];
    if (
      headers['content-type'] !== undefined &&
      !headers['content-type'].startsWith('application/cloudevents+json')
    ) {
      problems.push(`${where}: content-type ${headers['content-type']}`);
    }
    return problems;
  }

  /** Problems of the `tally-dlq-*` headers of one dead-letter record. */
  deadLetterProblems(headers: Readonly<Record<string, string | undefined>>): string[] {
    return this.check('tally.dlq.v1.headers.schema.json', headers, 'tally.dlq.v1 headers');
  }

  private check(file: string, value: unknown, where: string): string[] {
    const validate = this.validators.get(file);
    if (validate === undefined) return [`${where}: no published schema ${file}`];
    if (validate(value)) return [];
    return (validate.errors ?? []).map((e) => `${where}: ${file} ${e.instancePath} ${e.message ?? ''}`);
  }
}
