// node scripts/api-reference.mjs: writes docs/api.md (the decision API) and docs/projector-api.md (the
// projector's query API), the references for people, from the OpenAPI documents each app serves at
// GET /openapi.json. It reads the compiled code: `npm run build` first. Each app's *.openapi.spec.ts
// fails when its reference is stale.
import { existsSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const require = createRequire(import.meta.url);
const decisionModule = join(root, 'dist/apps/decision-api/src/decision-api.openapi.js');
const projectorModule = join(root, 'dist/apps/projector/src/projector.openapi.js');
const rendererModule = join(root, 'dist/libs/openapi/src/openapi-markdown.js');
if (![decisionModule, projectorModule, rendererModule].every((file) => existsSync(file))) {
  console.error('api-reference: no compiled code in dist/; run `npm run build` first');
  process.exit(1);
}
const { decisionApiDocument } = require(decisionModule);
const { projectorDocument } = require(projectorModule);
const { renderOpenApiMarkdown } = require(rendererModule);
for (const [file, document] of [
  ['docs/api.md', decisionApiDocument()],
  ['docs/projector-api.md', projectorDocument()],
]) {
  const target = join(root, file);
  writeFileSync(target, renderOpenApiMarkdown(document));
  console.log(`api-reference: ${target} written`);
}
