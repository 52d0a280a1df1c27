// node scripts/api-reference.mjs: writes docs/api.md, the decision API reference for people, from the
// OpenAPI document the API serves at GET /openapi.json. It reads the compiled code: `npm run build`
// first. apps/decision-api/src/decision-api.openapi.spec.ts fails when docs/api.md is stale.
import { existsSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const require = createRequire(import.meta.url);
const documentModule = join(root, 'dist/apps/decision-api/src/decision-api.openapi.js');
const rendererModule = join(root, 'dist/libs/http/src/openapi-markdown.js');
if (!existsSync(documentModule) || !existsSync(rendererModule)) {
  console.error('api-reference: no compiled code in dist/; run `npm run build` first');
  process.exit(1);
}
const { decisionApiDocument } = require(documentModule);
const { renderOpenApiMarkdown } = require(rendererModule);
const target = join(root, 'docs/api.md');
writeFileSync(target, renderOpenApiMarkdown(decisionApiDocument()));
console.log(`api-reference: ${target} written`);
