/** {@link RelayOptions} of this process, resolved (every default filled in). */
export const RELAY_OPTIONS = Symbol('RELAY_OPTIONS');
/** The relay's Redis connections ({@link RelayRedis}); closed on application shutdown. */
export const RELAY_REDIS = Symbol('RELAY_REDIS');

/**
 * The Redis consumer group every relay joins on every outbox stream. A contract: operators inspect
 * it (`XINFO GROUPS`), and renaming it would re-deliver every entry still in the stream.
 */
export const RELAY_GROUP = 'tally-relay';
