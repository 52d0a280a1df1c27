export { buildTree } from './build-tree';
export { eventually, sleep, type EventuallyOptions } from './eventually';
export { freePort } from './free-port';
export { PrivateRedis } from './private-redis';
export { makeSelfSignedCert, type SelfSignedCert } from './self-signed-cert';
export { testEnv, uniqueName } from './test-env';
export { PublishedContracts } from './published-contracts';
