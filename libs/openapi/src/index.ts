/**
 * @tally/openapi — the OpenAPI 3.1 documents of Tally's HTTP APIs: the builder (`buildOpenApi`),
 * the operations every service shares (`serviceOperations`: health, metrics, the auth and common
 * error codes) and the Markdown rendering of docs/api.md and docs/projector-api.md.
 *
 * Does NOT own:
 * - the body schemas (libs/api-contract); which operations an app has (each app's *.openapi.ts);
 * - serving the document (`openApiController`, @tally/http); the error vocabulary (@tally/errors).
 */
export { buildOpenApi, type OperationSpec } from './openapi';
export { renderOpenApiMarkdown } from './openapi-markdown';
export { AUTH_CODES, COMMON_CODES, serviceOperations } from './service.openapi';
