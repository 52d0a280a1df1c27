/**
 * @tally/http — what every Tally HTTP app shares: the Fastify app factory and its runner
 * (`createHttpApp`, `runHttpApp`, forking workers through @tally/cluster), the route gate (auth
 * before the body, no route / no Host / closing answered at once, overload shedding), deadlines, TLS,
 * the JSON body, request validation compiled from JSON Schemas, kind → HTTP status, the Nest module
 * (`HttpModule`: bearer tokens, the problem filter, `POST /v1/tokens:reload`, /healthz, /readyz,
 * /metrics) and the OpenAPI document's route.
 *
 * Does NOT own:
 * - tokens, roles, grants and the tokens file (@tally/auth); the error vocabulary and problem bodies
 *   (@tally/errors); the node:cluster primary and workers (@tally/cluster); the OpenAPI builder and
 *   its Markdown (@tally/openapi);
 * - the shapes of the bodies (libs/api-contract defines them; this lib compiles them);
 * - what a decision means (libs/engine), nor its gRPC mapping (libs/envoy-rls);
 * - the health and metrics registries (@tally/observability, which http reads and which never
 *   imports http); the settings (@tally/config).
 */
export { HttpModule } from './http.module';
export { httpOptionsFrom, type HttpOptions } from './http.options';
export { reloadOverHttp } from './file-reload';
export { strictValidationPipe, fieldErrors, validateAs, type Validated } from './validation';
export { compileSchemaCheck, type SchemaCheck } from './schema-validator';
export { QuerySchemaPipe } from './query-schema.pipe';
export { HTTP_STATUS_OF, type DecisionHttpStatus } from './decision-status';
export { openApiController } from './openapi.controller';
export { HTTP_OPTIONS } from './http.constants';
export { MAX_JSON_DEPTH } from './json-depth';
export { createHttpApp, httpAppOptions, type HttpAppOptions } from './create-http-app';
export { runHttpApp, workerCount, type HttpAppSpec } from './run-http-app';
