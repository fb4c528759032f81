// The layer rules of docs/ARCHITECTURE.md, checked by `npm run lint:deps` (part of `npm run lint` and so of
// `npm test`). Type-only imports count (tsPreCompilationDeps): `import type` is erased at run time, but it
// still ties a layer to the one it names, and a cycle through types is a cycle in the design.

/** Test files sit beside their code and may reach any layer (fakes, real stores, the hub). */
const TESTS = '\\.test\\.ts$';

/**
 * A layer may import itself and the layers listed after it, nothing else of src/. Listed from the top
 * of docs/ARCHITECTURE.md's picture down; `core` imports nothing of musubi's.
 */
const LAYERS = [
  ['cli', ['hub', 'runs', 'gateways', 'teams', 'agents', 'tasks', 'bus', 'store', 'core']],
  ['hub', ['runs', 'gateways', 'teams', 'agents', 'tasks', 'bus', 'store', 'core']],
  ['runs', ['teams', 'agents', 'tasks', 'bus', 'store', 'core']],
  ['gateways', ['teams', 'agents', 'tasks', 'bus', 'store', 'core']],
  ['teams', ['agents', 'tasks', 'bus', 'store', 'core']],
  ['agents', ['tasks', 'bus', 'store', 'core']],
  ['tasks', ['bus', 'store', 'core']],
  ['bus', ['store', 'core']],
  ['store', ['core']],
  ['core', []],
];

const layerRules = LAYERS.map(([layer, below]) => ({
  name: `layer-${layer}`,
  comment: `${layer}/ imports only ${[layer, ...below].join(', ')} (docs/ARCHITECTURE.md, Layers)`,
  severity: 'error',
  from: { path: `^src/${layer}/`, pathNot: TESTS },
  to: { path: '^src/', pathNot: `^src/(${[layer, ...below].join('|')})/` },
}));

/** What only hub/ (and tests) construct; any other module may import these for their types only. */
const ASSEMBLED = {
  bus: '^src/bus/bus\\.ts$',
  registry: '^src/tasks/task-registry\\.ts$',
  runner: '^src/agents/create-agent-runner\\.ts$',
  team: '^src/teams/[^/]+/[^/]+-team\\.ts$',
  gateway: ['^src/gateways/[^/]+/[^/]+-gateway\\.ts$', '^src/gateways/mcp/mcp-agent-server\\.ts$'],
};

/**
 * Modules outside hub/ that still build a part of the stack themselves, each with what it builds and
 * why. The list may only shrink: a listed module that builds anything more fails like any other.
 */
const BUILT_OUTSIDE_HUB = [
  // Builds nothing: it needs MONITOR_LOCKED_MESSAGE (spec ignite.md 4.8), which lives in the gateway's
  // module. Goes when the constant (or an isMonitorLocked predicate) moves out of ignite-gateway.ts.
  ['src/cli/ignite/monitor-command.ts', ['gateway'], "the queue monitor's locked-out message"],
  // Each of these gateways builds its team from its own wire settings; the hub should build the team
  // from `teams.<id>.pattern` and hand it in (src/hub/build-gateways.ts).
  ['src/gateways/yadon/yadon-gateway.ts', ['team'], 'the three-phase team behind yadoran'],
  ['src/gateways/neko/neko-gateway.ts', ['team'], 'the executor, rebuilt on a config reload'],
  ['src/gateways/agent-sync/agent-sync-protocol.ts', ['team'], 'the rounds team of one agent_sync team id'],
];

const assembledPaths = (kinds) => kinds.flatMap((kind) => ASSEMBLED[kind]);
const pathRegex = (file) => `^${file.replaceAll('.', '\\.')}$`;

const assemblyRules = [
  {
    name: 'only-hub-assembles',
    comment: 'Only hub/ (and tests) construct the bus, task registry, runners, teams and gateways.',
    severity: 'error',
    from: {
      path: '^src/',
      pathNot: [
        '^src/hub/',
        // The library's public API: createBus lets a program embedding musubi build its own bus.
        '^src/index\\.ts$',
        TESTS,
        ...BUILT_OUTSIDE_HUB.map(([file]) => pathRegex(file)),
      ],
    },
    to: { path: assembledPaths(Object.keys(ASSEMBLED)), dependencyTypesNot: ['type-only'] },
  },
  ...BUILT_OUTSIDE_HUB.map(([file, kinds, why]) => ({
    name: 'only-hub-assembles',
    comment: `Known exception, builds only ${kinds.join(' and ')}: ${why}.`,
    severity: 'error',
    from: { path: pathRegex(file) },
    to: {
      path: assembledPaths(Object.keys(ASSEMBLED)),
      pathNot: assembledPaths(kinds),
      dependencyTypesNot: ['type-only'],
    },
  })),
];

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import cycles, through types or not.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...layerRules,
    {
      name: 'store-implementations-only-from-hub',
      comment:
        'Only hub/ (and tests) import a concrete store; everyone else depends on the port, the files at the top of store/.',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/hub/', '^src/store/', TESTS] },
      to: { path: '^src/store/[^/]+/' },
    },
    {
      name: 'only-bus-and-tasks-touch-a-store',
      comment:
        'Above bus/ and tasks/, store/ is named for its types (the Delivery a receive hands out), never imported for code.',
      severity: 'error',
      from: { path: '^src/(agents|teams|gateways|cli)/', pathNot: TESTS },
      to: { path: '^src/store/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'gateways-meet-through-index',
      comment:
        'A folder of gateways/ reaches another only through that folder’s index.ts (its public surface).',
      severity: 'error',
      from: { path: '^src/gateways/([^/]+)/', pathNot: TESTS },
      to: {
        path: '^src/gateways/[^/]+/',
        pathNot: ['^src/gateways/$1/', '^src/gateways/[^/]+/index\\.ts$'],
      },
    },
    ...assemblyRules,
    {
      name: 'dashboard-talks-only-to-http',
      comment: 'The web page is its own bundle: it shares at most the HTTP gateway’s schemas.',
      severity: 'error',
      from: { path: '^src/dashboard/' },
      to: { path: '^src/', pathNot: ['^src/dashboard/', '^src/gateways/http/'] },
    },
    {
      name: 'nothing-imports-the-dashboard',
      comment: 'The dashboard is served as files; no module of the daemon imports it.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/dashboard/' },
      to: { path: '^src/dashboard/' },
    },
    {
      name: 'src-not-to-test-or-bench',
      comment: 'Shipped code never imports test/ or bench/ (the store conformance suite lives in test/).',
      severity: 'error',
      from: { path: '^src/', pathNot: TESTS },
      to: { path: '^(test|bench)/' },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'Every import resolves (a typo or a moved file).',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.json', '.d.ts'],
    },
  },
};
