import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import { DecisionDataV1, DecisionEventV1 } from './decision-event.v1';
import { decisionEventProblem, usageEventProblem } from './event-guards';
import { DECISION_EVENT_TYPE, USAGE_EVENT_TYPE } from './event-types';
import { UsageDataV1, UsageEventV1 } from './usage-event.v1';

/** A consumed message: the validated event, or why it was rejected (the dead-letter reason). */
export type ParseResult<E> =
  { readonly ok: true; readonly event: E } | { readonly ok: false; readonly reason: string };

export type LedgerEvent = UsageEventV1 | DecisionEventV1;

interface EventKind<E> {
  readonly type: string;
  readonly envelope: new () => E;
  readonly data: new () => object;
  readonly problem: (event: Record<string, unknown>) => string | null;
}

const USAGE: EventKind<UsageEventV1> = {
  type: USAGE_EVENT_TYPE,
  envelope: UsageEventV1,
  data: UsageDataV1,
  problem: usageEventProblem,
};
const DECISION: EventKind<DecisionEventV1> = {
  type: DECISION_EVENT_TYPE,
  envelope: DecisionEventV1,
  data: DecisionDataV1,
  problem: decisionEventProblem,
};

/** Validates a `tally.usage.v1` message as read from Kafka. */
export function parseUsageEvent(message: Buffer | string): ParseResult<UsageEventV1> {
  return parseAs(USAGE, message);
}

/** Validates a `tally.decision.v1` message as read from Kafka. */
export function parseDecisionEvent(message: Buffer | string): ParseResult<DecisionEventV1> {
  return parseAs(DECISION, message);
}

/** Validates either event type, chosen by its `type` attribute (for a consumer of both topics). */
export function parseLedgerEvent(message: Buffer | string): ParseResult<LedgerEvent> {
  const plain = parseJson(message);
  if (!plain.ok) return plain;
  switch (plain.event.type) {
    case USAGE_EVENT_TYPE:
      return validated(USAGE, plain.event, plain.nulls);
    case DECISION_EVENT_TYPE:
      return validated(DECISION, plain.event, plain.nulls);
    default:
      return { ok: false, reason: `type: unknown event type ${JSON.stringify(plain.event.type)}` };
  }
}

function parseAs<E extends LedgerEvent>(kind: EventKind<E>, message: Buffer | string): ParseResult<E> {
  const plain = parseJson(message);
  if (!plain.ok) return plain;
  // The type is checked first so a message on the wrong topic gets one clear reason, not twenty.
  if (plain.event.type !== kind.type) {
    return { ok: false, reason: `type: expected ${kind.type}, got ${JSON.stringify(plain.event.type)}` };
  }
  return validated(kind, plain.event, plain.nulls);
}

type ParsedJson =
  | { readonly ok: true; readonly event: Record<string, unknown>; readonly nulls: boolean }
  | { readonly ok: false; readonly reason: string };

/** `nulls`: whether the text holds a `null` anywhere (rarely: only then is there one to drop). */
function parseJson(message: Buffer | string): ParsedJson {
  const text = typeof message === 'string' ? message : message.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, reason: 'not a JSON object' };
  }
  return { ok: true, event: value as Record<string, unknown>, nulls: text.includes('null') };
}

/**
 * The fast guard decides; class-validator explains. A valid event (the normal case) never pays for
 * class-transformer/class-validator; a rejected one gets every problem listed, as the DTOs word it.
 */
function validated<E extends LedgerEvent>(
  kind: EventKind<E>,
  plain: Record<string, unknown>,
  nulls: boolean,
): ParseResult<E> {
  const problem = kind.problem(plain);
  if (problem === null) return { ok: true, event: nulls ? hydrate<E>(plain) : (plain as E) };
  const event = plainToInstance(kind.envelope, plain, { enableImplicitConversion: false });
  const errors = validateSync(event, { forbidUnknownValues: true, validationError: { target: false } });
  const reasons = describe(errors);
  return { ok: false, reason: reasons.length > 0 ? reasons.join('; ') : `${problem}: invalid` };
}

/**
 * The checked plain object IS the event: the classes are its declared shape (and class-validator's
 * schema for the reasons of a rejected one), never needed at run time. Null optional fields, which
 * @IsOptional lets through, are dropped so the types' `field?: T` holds. The objects are this
 * parse's own (fresh from JSON.parse), so nothing is copied; giving them their class prototypes
 * (Object.setPrototypeOf) cost 8 % of a replay's CPU and is not done.
 */
function hydrate<E extends LedgerEvent>(plain: Record<string, unknown>): E {
  const data = plain.data as { policies: { windows: object[] }[] };
  for (const policy of data.policies) {
    for (const window of policy.windows) dropNulls(window);
  }
  dropNulls(data);
  return dropNulls(plain) as E;
}

function dropNulls<T extends object>(value: T): T {
  const record = value as Record<string, unknown>;
  for (const key in record) if (record[key] === null) delete record[key];
  return value;
}

/** `data.policies[0].windows[1].limit: limit must be an integer number`, one per problem. */
function describe(errors: readonly ValidationError[], parent = ''): string[] {
  return errors.flatMap((error) => {
    const path = /^\d+$/.test(error.property)
      ? `${parent}[${error.property}]`
      : parent === ''
        ? error.property
        : `${parent}.${error.property}`;
    const own = Object.values(error.constraints ?? {}).map((message) => `${path}: ${message}`);
    return [...own, ...describe(error.children ?? [], path)];
  });
}
