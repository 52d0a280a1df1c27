// The dependency direction of the tree (STYLE.md rule 18; the layers are listed in
// docs/architecture.md), checked by `npm run deps` in the gate.
//
// LIBS is the whole layer list: each lib and the libs it may import. Anything not listed is refused,
// so a new edge is a one-line change here that a reviewer sees. Every list only names libs of a
// lower layer, which is what keeps the graph free of cycles; `no-circular` checks it anyway, and
// also catches cycles between the files of one lib.
/** @type {Record<string, string[]>} */
const LIBS = {
  // Layer 0: import no other lib (api-contract and events import TypeBox and ajv only).
  config: [],
  events: [],
  redis: [],
  'api-contract': [],
  // Layer 1.
  policy: ['config'],
  ledger: ['events'], // the AsyncAPI document is built from the events' schemas
  observability: ['api-contract'], // health bodies typed from the contract
  client: ['api-contract'], // type imports only: the SDK loads no server lib
  errors: ['api-contract'], // the error vocabulary and problem bodies
  cluster: ['config'], // the decision API's node:cluster primary and workers
  // Layer 2.
  testing: ['policy'],
  engine: ['api-contract', 'events', 'policy', 'redis'],
  auth: ['config', 'errors', 'policy'], // tokens, roles, grants, the tokens file
  openapi: ['api-contract', 'errors'], // the OpenAPI builder and its Markdown
  // Layer 3.
  http: ['api-contract', 'auth', 'cluster', 'config', 'errors', 'observability'],
  'envoy-rls': ['api-contract', 'engine', 'policy'],
  outbox: ['engine', 'events', 'ledger', 'observability', 'redis'],
  projections: ['config', 'events', 'ledger', 'observability', 'redis'],
  // Layer 4.
  ops: ['auth', 'config', 'engine', 'errors', 'events', 'ledger', 'policy', 'projections', 'redis'],
};

const escape = (name) => name.replace(/[-/\\^$*+?.()|[\]{}]/g, '\\$&');

// A lib's front doors: its src/index.ts, and the client package's second entry (@tally/client/nest).
const FRONT_DOORS = ['^libs/[^/]+/src/index\\.ts$', '^libs/client/src/nest/index\\.ts$'];

const layerRules = Object.entries(LIBS).map(([lib, allowed]) => ({
  name: `layer-${lib}`,
  comment: `libs/${lib} may import only ${allowed.length === 0 ? 'no other lib' : allowed.join(', ')} (LIBS in .dependency-cruiser.cjs).`,
  severity: 'error',
  from: { path: `^libs/${escape(lib)}/` },
  to: {
    path: '^libs/[^/]+/',
    // Its own files, the libs it may import, and libs/testing (its own rule below says from where).
    pathNot: [`^libs/${escape(lib)}/`, '^libs/testing/', ...allowed.map((a) => `^libs/${escape(a)}/`)],
  },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      // Runtime edges: a cycle of loaded modules makes the load order matter (an `@Inject(X)` read
      // while X's module is still loading injects nothing). Cycles made only of `import type` load
      // nothing; between libs the layer rules below refuse them too.
      comment: 'A cycle means a boundary is wrong (STYLE.md rule 14).',
      severity: 'error',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'unknown-lib',
      comment: 'Every lib has a line in LIBS (.dependency-cruiser.cjs) and in docs/architecture.md.',
      severity: 'error',
      from: { path: '^libs/([^/]+)/', pathNot: `^libs/(${Object.keys(LIBS).map(escape).join('|')})/` },
      to: {},
    },
    ...layerRules,
    {
      name: 'no-app-import',
      comment: 'Nothing imports an app; only the tests under test/ boot one.',
      severity: 'error',
      from: { path: '^libs/' },
      to: { path: '^apps/' },
    },
    {
      name: 'no-app-to-app',
      comment: 'An app never imports another app.',
      severity: 'error',
      from: { path: '^apps/([^/]+)/' },
      to: { path: '^apps/', pathNot: '^apps/$1/' },
    },
    {
      name: 'testing-only-from-tests',
      comment: 'libs/testing is for specs and test/ only.',
      severity: 'error',
      from: { path: '^(apps|libs)/', pathNot: ['\\.spec\\.ts$', '^libs/testing/'] },
      to: { path: '^libs/testing/' },
    },
    {
      name: 'test-imports-libs-by-name',
      comment: 'A test imports a lib as @tally/<lib>, never by a relative path into libs/.',
      severity: 'error',
      from: { path: '^test/' },
      to: { path: '^libs/', dependencyTypesNot: ['aliased'] },
    },
    {
      name: 'lib-front-door-only',
      comment: 'No deep imports: from outside a lib, only its src/index.ts.',
      severity: 'error',
      from: { path: '^libs/([^/]+)/' },
      to: { path: '^libs/[^/]+/', pathNot: ['^libs/$1/', ...FRONT_DOORS] },
    },
    {
      name: 'app-front-door-only',
      comment: 'No deep imports of a lib from an app or a test.',
      severity: 'error',
      from: { path: '^(apps|test)/' },
      to: { path: '^libs/[^/]+/', pathNot: FRONT_DOORS },
    },
    {
      name: 'no-relative-across-roots',
      comment: "No '../' out of an app or a lib: its own files only.",
      severity: 'error',
      from: { path: '^(apps|libs)/([^/]+)/' },
      to: { path: '^(apps|libs)/', pathNot: '^$1/$2/', dependencyTypesNot: ['aliased'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules|\\.local|\\.tools)/' },
    // Type-only imports count: a layer is about what a lib knows, not only what it loads.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
};
