// Helpers for specs and the suites under test/ (never for production code: the gate refuses it):
// private Redis servers, free ports, polling with a deadline, test policies, self-signed certificates,
// a seeded PRNG.
// Does NOT own: any fixture of one suite (it stays in that suite's file or harness).
export { buildTree } from './build-tree';
export { eventually, sleep, type EventuallyOptions } from './eventually';
export { ensureTool } from './ensure-tool';
export { freeClusterPorts } from './free-cluster-ports';
export { freePort } from './free-port';
export { PrivateRedis } from './private-redis';
export { seededRandom } from './seeded-random';
export { makeSelfSignedCert, type SelfSignedCert } from './self-signed-cert';
export { testEnv, uniqueName } from './test-env';
export { PublishedContracts } from './published-contracts';
export { testPolicy } from './test-policy';
export {
  errorCodesIn,
  itIsAPublishedOpenApiDocument,
  type OpenApiDocumentExpectations,
} from './openapi-document.checks';
