// Redis plumbing shared by every lib that talks to Redis: the client type, the one client factory
// (with its reconnect profiles), the Lua script loader, the retry backoff, and ioredis's pipeline
// without its per-instance accessor (installed by the client factory, with a RESP2 reply decoder).
// Does NOT own: any key layout (engine's keys.ts, projections' projection-keys.ts), any script
// (each lives beside its caller), or where Redis is configured (@tally/config's RedisTarget).
export type { RedisClient, RedisConnection } from './redis-connection';
export { createRedisClient, reconnectBackoff, type RedisProfile } from './redis-client';
export { defineScript, luaScript, scriptCommand, type LuaScript } from './lua-script';
export { backoffMs, jitteredBackoffMs, sleep, type RandomSource } from './backoff';
export { scanKeys } from './scan-keys';
export { installLeanPipeline, leanPipeline } from './lean-pipeline';
