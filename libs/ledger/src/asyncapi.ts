import {
  CLOUDEVENTS_CONTENT_TYPE,
  DeadLetterHeadersV1,
  DecisionEventV1,
  DecisionEventV2,
  EVENT_SOURCE,
  LeaseEventV1,
  OverrideEventV1,
  UsageEventV1,
} from '@tally/events';
import { ledgerTopicSpecs, TOPICS } from './topics';

/** The default of `TALLY_TOPIC_PARTITIONS`, and what `TALLY_TOPIC_REPLICATION=auto` gives one broker. */
const DEFAULT_TOPICS = { partitions: 12, replicationFactor: 1 };
const KAFKA_BINDING = '0.5.0';

/**
 * The AsyncAPI 3.0 document of Tally's topics: names, keys, headers, partitions, retention and the
 * CloudEvents envelope with each type's `data`, built from the definitions the code runs on (topic
 * specs here, event schemas in @tally/events). Published as docs/contracts/asyncapi.json;
 * asyncapi.spec.ts validates it with the AsyncAPI parser and fails when the committed file is stale.
 */
export function asyncApiDocument(): Record<string, unknown> {
  const specs = new Map(ledgerTopicSpecs(DEFAULT_TOPICS).map((spec) => [spec.topic, spec]));
  const channel = (topic: string, message: string | readonly string[], description: string) => {
    const messages = typeof message === 'string' ? [message] : message;
    const spec = specs.get(topic);
    const retention = spec?.configs?.['retention.ms'];
    return {
      address: topic,
      description,
      messages: Object.fromEntries(messages.map((m) => [m, { $ref: `#/components/messages/${m}` }])),
      bindings: {
        kafka: {
          topic,
          partitions: spec?.partitions,
          replicas: spec?.replicationFactor,
          ...(retention === undefined ? {} : { topicConfiguration: { 'retention.ms': Number(retention) } }),
          bindingVersion: KAFKA_BINDING,
        },
      },
    };
  };
  const operation = (
    action: 'send' | 'receive',
    channel: string,
    message: string | readonly string[],
    summary: string,
  ) => ({
    action,
    summary,
    channel: { $ref: `#/channels/${channel}` },
    messages: (typeof message === 'string' ? [message] : message).map((m) => ({
      $ref: `#/channels/${channel}/messages/${m}`,
    })),
  });
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Tally ledger',
      version: '2.0.0',
      description:
        'The Kafka topics Tally writes. Events are CloudEvents 1.0 in structured mode: the record value is the whole event as JSON, its `content-type` header `application/cloudevents+json`. ' +
        "With tracing on, a sampled decision's usage record also carries the CloudEvents distributed-tracing extension `traceparent` (W3C Trace Context), as an attribute of the event, the structured mode's place for it (no `ce_traceparent` header); unsampled records have no such attribute. " +
        `Partitions are the default of TALLY_TOPIC_PARTITIONS; replication is what TALLY_TOPIC_REPLICATION=auto gives a single broker (three brokers or more: 3, with min.insync.replicas 2); topics without retention.ms keep the broker's retention. Source of every event: \`${EVENT_SOURCE}\`.`,
    },
    defaultContentType: CLOUDEVENTS_CONTENT_TYPE,
    channels: {
      usage: channel(
        TOPICS.usage,
        'usageEvent',
        'Every allowed or degraded decision with cost > 0: the commercial ledger, kept forever.',
      ),
      decision: channel(
        TOPICS.decision,
        ['decisionEventV2', 'overrideEvent'],
        'The decisions that have no usage record: every quota denial (coalesced per second, key and reason); and every change of a runtime override (`tally.override.v1`, keyed by its tenant): consumers dispatch on the `type` attribute. An allowed or degraded decision is its usage record alone.',
      ),
      decisionV1: channel(
        TOPICS.decisionV1,
        ['decisionEvent', 'overrideEvent'],
        'The decision topic of the first contract, read for its history: every allowed or degraded decision with cost > 0 (the twin of its usage record, same id), every quota denial, every override change. Relays of this contract write nothing here.',
      ),
      lease: channel(
        TOPICS.lease,
        'leaseEvent',
        'Every concurrency lease released before its expiry (not usage: billing and the projector ignore it).',
      ),
      deadLetter: channel(
        TOPICS.deadLetter,
        'deadLetter',
        'Records the relay or the projector could not turn into, or apply as, a valid event. Never dropped silently.',
      ),
    },
    operations: {
      sendUsage: operation('send', 'usage', 'usageEvent', 'The relay publishes usage events.'),
      sendDecision: operation(
        'send',
        'decision',
        ['decisionEventV2', 'overrideEvent'],
        'The relay publishes denials and override changes.',
      ),
      sendLease: operation('send', 'lease', 'leaseEvent', 'The relay publishes lease releases.'),
      sendDeadLetter: operation(
        'send',
        'deadLetter',
        'deadLetter',
        'The relay and the projector dead-letter.',
      ),
      receiveUsage: operation('receive', 'usage', 'usageEvent', 'The projector (and billing) consume usage.'),
      receiveDecision: operation(
        'receive',
        'decision',
        ['decisionEventV2', 'overrideEvent'],
        'The projector consumes denials and override changes (the audit trail, with the degraded and would-deny decisions of the usage topic).',
      ),
      receiveDecisionV1: operation(
        'receive',
        'decisionV1',
        ['decisionEvent', 'overrideEvent'],
        'The projector, `tally replay` and `tally simulate` read the history of the first contract: its denials and override changes (its allowed and degraded records repeat their usage twins and are skipped).',
      ),
    },
    components: {
      messages: {
        usageEvent: eventMessage('tally.usage.v1', UsageEventV1),
        decisionEvent: eventMessage('tally.decision.v1', DecisionEventV1),
        decisionEventV2: eventMessage('tally.decision.v2', DecisionEventV2),
        leaseEvent: eventMessage('tally.lease.v1', LeaseEventV1),
        overrideEvent: eventMessage('tally.override.v1', OverrideEventV1),
        deadLetter: {
          name: 'tally.dlq.v1',
          title: 'A dead-lettered record',
          contentType: 'application/octet-stream',
          headers: plain(DeadLetterHeadersV1),
          payload: {
            description:
              'The relay: JSON `{"source":"tally-relay", …, "reason", "fields"}` holding the raw outbox entry or denial-hash fields. The projector: the original record bytes, with the original key and headers.',
          },
          bindings: {
            kafka: {
              key: {
                type: 'string',
                description:
                  'The relay: the outbox stream key or the denial-hash field. The projector: the original key, else `<topic>:<partition>`.',
              },
              bindingVersion: KAFKA_BINDING,
            },
          },
        },
      },
    },
  };
}

function eventMessage(type: string, schema: object) {
  return {
    name: type,
    title: `A ${type} CloudEvent`,
    contentType: CLOUDEVENTS_CONTENT_TYPE,
    headers: {
      type: 'object',
      required: ['content-type'],
      properties: { 'content-type': { const: CLOUDEVENTS_CONTENT_TYPE } },
    },
    payload: plain(schema),
    bindings: {
      kafka: {
        key: {
          type: 'string',
          description:
            "The tenant, else the first policy's key (the subject after its `/`), else the event id: one tenant's (or key's) events stay in one partition, in order.",
        },
        bindingVersion: KAFKA_BINDING,
      },
    },
  };
}

/** TypeBox marks schemas with symbol keys; a document carries plain JSON. */
function plain(schema: object): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}
