// The dependency direction of the tree (STYLE.md rule 18; the layers are listed in
// docs/architecture.md), checked by `npm run deps` in the gate.
//
// LIBS is the whole layer list, read from libs/libs.json (the one list of libs): each lib and the
// libs it may import. Anything not listed is refused, so a new edge is a one-line change there that
// a reviewer sees. Every list only names libs of a lower layer (libs/libs.spec.ts checks it), which is
// what keeps the graph free of cycles; `no-circular` checks it anyway, and also catches cycles
// between the files of one lib.
/** @type {Record<string, string[]>} */
const LIBS = Object.fromEntries(
  Object.entries(require('./libs/libs.json').libs).map(([lib, { imports }]) => [lib, imports]),
);

const escape = (name) => name.replace(/[-/\\^$*+?.()|[\]{}]/g, '\\$&');

// A lib's front doors: its src/index.ts, and the client package's second entry (@tally/client/nest).
const FRONT_DOORS = ['^libs/[^/]+/src/index\\.ts$', '^libs/client/src/nest/index\\.ts$'];

const layerRules = Object.entries(LIBS).map(([lib, allowed]) => ({
  name: `layer-${lib}`,
  comment: `libs/${lib} may import only ${allowed.length === 0 ? 'no other lib' : allowed.join(', ')} (libs/libs.json).`,
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
      comment:
        'Every lib has an entry in libs/libs.json (and so in LIBS), held to docs/architecture.md by libs/libs.spec.ts.',
      severity: 'error',
      from: { path: '^libs/([^/]+)/', pathNot: `^libs/(${Object.keys(LIBS).map(escape).join('|')})/` },
      to: {},
    },
    ...layerRules,
    // Inside libs/engine (its index.ts says what each folder owns): the store is reached through
    // the ports, plan/ stays pure, and failure/ and leases/ know the store only by its key layout.
    {
      name: 'engine-store-behind-ports',
      comment:
        'Use cases name a port (DecisionStore, LeaseStore, DegradedOutbox); only engine.module.ts binds EngineService to them.',
      severity: 'error',
      from: {
        path: '^libs/engine/src/',
        pathNot: '^libs/engine/src/(store/|engine\\.module\\.ts$|index\\.ts$)',
      },
      to: { path: '^libs/engine/src/store/engine\\.service\\.ts$' },
    },
    {
      name: 'engine-plan-is-pure',
      comment: 'plan/ does no I/O: of the other parts it calls only the key layout and the lease plan.',
      severity: 'error',
      from: { path: '^libs/engine/src/plan/' },
      to: {
        path: [
          '^libs/engine/src/(failure|overrides)/',
          '^libs/engine/src/store/(?!keys\\.ts$)',
          '^libs/engine/src/leases/(?!lease-plan\\.ts$)',
          '^libs/redis/',
          '(^|/)node_modules/(ioredis|@nestjs)/',
        ],
      },
    },
    {
      name: 'engine-parts-not-the-store',
      comment: 'failure/ and leases/ reach Redis through their ports; of store/ they use only keys.ts.',
      severity: 'error',
      from: { path: '^libs/engine/src/(failure|leases)/' },
      to: { path: '^libs/engine/src/store/', pathNot: '^libs/engine/src/store/keys\\.ts$' },
    },
    {
      name: 'engine-folder-doors-for-the-index',
      comment:
        "A folder's index.ts is the lib index's view of it; the engine's own files import files, not doors.",
      severity: 'error',
      from: { path: '^libs/engine/src/', pathNot: '^libs/engine/src/index\\.ts$' },
      to: { path: '^libs/engine/src/[^/]+/index\\.ts$' },
    },
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
