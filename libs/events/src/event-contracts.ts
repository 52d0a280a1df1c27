import { DeadLetterHeadersV1 } from './dead-letter.v1';
import { DecisionDataV1, DecisionEventV1 } from './decision-event.v1';
import { DecisionDataV2, DecisionEventV2 } from './decision-event.v2';
import {
  DECISION_EVENT_TYPE,
  DECISION_V2_EVENT_TYPE,
  LEASE_EVENT_TYPE,
  OVERRIDE_EVENT_TYPE,
  USAGE_EVENT_TYPE,
} from './event-types';
import { LeaseDataV1, LeaseEventV1 } from './lease-event.v1';
import { OverrideDataV1, OverrideEventV1 } from './override-event.v1';
import { UsageDataV1, UsageEventV1 } from './usage-event.v1';

/** The JSON Schema dialect of the published documents (AsyncAPI 3.0's default schema format is its superset). */
export const JSON_SCHEMA_DIALECT = 'http://json-schema.org/draft-07/schema#';

/** One published document: the file under docs/contracts/ and the JSON Schema it holds. */
export interface ContractDocument {
  readonly file: string;
  readonly schema: Readonly<Record<string, unknown>>;
}

/**
 * The JSON Schema documents published for other teams' tools (billing generates its types from the
 * `data` ones), generated from the schemas the consumers validate with. `npm run contracts` writes
 * them to docs/contracts/; event-contracts.spec.ts fails when a committed file is stale.
 */
export function eventContractDocuments(): ContractDocument[] {
  return [
    document(`${USAGE_EVENT_TYPE}.data.schema.json`, UsageDataV1),
    document(`${DECISION_EVENT_TYPE}.data.schema.json`, DecisionDataV1),
    document(`${USAGE_EVENT_TYPE}.event.schema.json`, UsageEventV1),
    document(`${DECISION_EVENT_TYPE}.event.schema.json`, DecisionEventV1),
    document(`${DECISION_V2_EVENT_TYPE}.data.schema.json`, DecisionDataV2),
    document(`${DECISION_V2_EVENT_TYPE}.event.schema.json`, DecisionEventV2),
    document(`${LEASE_EVENT_TYPE}.data.schema.json`, LeaseDataV1),
    document(`${LEASE_EVENT_TYPE}.event.schema.json`, LeaseEventV1),
    document(`${OVERRIDE_EVENT_TYPE}.data.schema.json`, OverrideDataV1),
    document(`${OVERRIDE_EVENT_TYPE}.event.schema.json`, OverrideEventV1),
    document('tally.dlq.v1.headers.schema.json', DeadLetterHeadersV1),
  ];
}

function document(file: string, schema: object): ContractDocument {
  // JSON round trip: TypeBox marks its schemas with symbol keys, which no document carries.
  const plain = JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
  return { file, schema: { $schema: JSON_SCHEMA_DIALECT, $id: `urn:tally:contracts:${file}`, ...plain } };
}
