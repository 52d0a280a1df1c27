/** {@link ProjectorOptions} after defaults. */
export const PROJECTOR_OPTIONS = Symbol('PROJECTOR_OPTIONS');
/** The projections' Redis client (a `worker` client of @tally/redis); closed on application shutdown. */
export const PROJECTION_REDIS = Symbol('PROJECTION_REDIS');
/** The clock of queries (epoch ms); tests pass a fixed one. */
export const PROJECTION_CLOCK = Symbol('PROJECTION_CLOCK');
/**
 * The projector's Kafka consumer group. The CLI's `consumers` commands treat this group specially
 * (its real offsets live with the active namespace in Redis), so both read this one constant.
 */
export const PROJECTOR_GROUP = 'tally-projector';
