/**
 * @tally/outbox: the relay. Reads every shard's outbox stream with a consumer group, re-claims what a
 * dead relay left pending, drains coalesced denials under leases, publishes with the idempotent
 * producer, then acknowledges and deletes; relay health and metrics.
 *
 * Does NOT own:
 * - writing the outbox: decide.lua, the degraded append, release.lua and override writes (`@tally/engine`);
 * - the entries' payload format, the stream and denial-hash layouts below a shard's base key, the events
 *   built from entries (`@tally/events`); the shard keys themselves (`@tally/engine`'s `allShardKeys`);
 * - Kafka clients, topics and provisioning (`@tally/ledger`): it is handed a producer;
 * - the Redis client factory (`@tally/redis`), the metrics and health registries (`@tally/observability`).
 */
export { OutboxModule } from './outbox.module';
export type { OutboxModuleOptions } from './outbox.module';
export { OutboxRelay } from './outbox-relay.service';
export type { RelayOptions } from './relay.options';
export { RELAY_GROUP } from './outbox.constants';
