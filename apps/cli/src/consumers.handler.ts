import type { ResetTarget } from '@tally/ledger';
import { consumersStatus, PROJECTOR_GROUP, PROJECTOR_TOPICS, resetConsumers } from '@tally/ops';
import type { ParsedArgs } from './cli-args';
import type { CliContext, CommandOutcome } from './cli-context';
import { table } from './output';

function groupAndTopics(args: ParsedArgs): { group: string; topics: readonly string[] } {
  const topic = args.options.topic;
  return {
    group: typeof args.options.group === 'string' ? args.options.group : PROJECTOR_GROUP,
    topics: typeof topic === 'string' ? [topic] : PROJECTOR_TOPICS,
  };
}

/** `tally consumers status`: members, assignment, committed (and projector-stored) offsets, lag. */
export async function consumersStatusCommand(args: ParsedArgs, ctx: CliContext): Promise<CommandOutcome> {
  const { group, topics } = groupAndTopics(args);
  const status = await consumersStatus(
    { admin: ctx.ledger().admin, redis: group === PROJECTOR_GROUP ? ctx.redis() : undefined },
    group,
    topics,
  );
  const lines = [
    `group ${status.group}: ${status.state}, ${status.members.length} member(s), lag ${status.totalLag}` +
      (status.namespace === null ? '' : ` (projector offsets of namespace ${status.namespace})`),
  ];
  if (status.storedUnavailable !== undefined)
    lines.push(`stored offsets unavailable: ${status.storedUnavailable}`);
  if (status.members.length > 0) {
    const members = status.members.map((m) => [
      m.clientId,
      m.host,
      Object.entries(m.assignment)
        .map(([t, ps]) => `${t}[${ps.join(',')}]`)
        .join(' ') || '-',
      m.memberId,
    ]);
    lines.push('', table(['CLIENT', 'HOST', 'ASSIGNED', 'MEMBER'], members));
  }
  const stored = status.namespace !== null;
  const rows = status.partitions.map((p) => [
    p.topic,
    p.partition,
    p.low,
    p.high,
    p.committed,
    p.lag,
    ...(stored ? [p.stored, p.storedLag] : []),
    p.owner,
  ]);
  const headers = [
    'TOPIC',
    'PARTITION',
    'LOW',
    'HIGH',
    'COMMITTED',
    'LAG',
    ...(stored ? ['STORED', 'STORED-LAG'] : []),
    'OWNER',
  ];
  lines.push('', table(headers, rows));
  return { exitCode: 0, json: status, text: lines.join('\n') };
}

/** `tally consumers reset --to …`: refuses while the group has members (exit 1). */
export async function consumersResetCommand(args: ParsedArgs, ctx: CliContext): Promise<CommandOutcome> {
  const { group, topics } = groupAndTopics(args);
  const to = args.options.to;
  const target: ResetTarget = typeof to === 'number' ? { timestamp: to } : (to as 'earliest' | 'latest');
  const result = await resetConsumers(
    { admin: ctx.ledger().admin, redis: group === PROJECTOR_GROUP ? ctx.redis() : undefined },
    group,
    topics,
    target,
  );
  const where = typeof to === 'number' ? new Date(to).toISOString() : String(to);
  const lines = [
    `group ${group} reset to ${where}`,
    table(
      ['TOPIC', 'PARTITION', 'OFFSET'],
      result.partitions.map((p) => [p.topic, p.partition, p.offset]),
    ),
    '',
    result.namespace !== null
      ? `the projector's own offsets, stored with the active namespace ${result.namespace}, were set to the same positions: it resumes there`
      : group === PROJECTOR_GROUP
        ? 'no active projection namespace: only the Kafka group offsets were moved'
        : 'only the Kafka group offsets were moved',
  ];
  return { exitCode: 0, json: result, text: lines.join('\n') };
}
