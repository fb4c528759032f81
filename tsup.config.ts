import { defineConfig } from 'tsup';

// The CLI entry is bundled so `musubi --help` starts fast; commands import their heavy
// modules lazily (dynamic import), which tsup splits into separate chunks.
// The dashboard (src/dashboard) is a separate browser bundle in dist/dashboard, which the HTTP
// gateway serves; its static files come from src/dashboard/public.
// Every build is silent (`npm start` and `npm test` build first): errors are still printed.
export default defineConfig([
  {
    entry: { cli: 'src/cli/main.ts', index: 'src/index.ts', yadon: 'src/cli/yadon-main.ts' },
    format: ['esm'],
    target: 'node20',
    platform: 'node',
    splitting: true,
    sourcemap: true,
    clean: ['!dashboard/**', '!ignite-mime.cjs*', '!ignite-send.cjs*'],
    dts: false,
    silent: true,
    banner: { js: '#!/usr/bin/env node' },
  },
  {
    entry: { app: 'src/dashboard/app.ts' },
    outDir: 'dist/dashboard',
    format: ['esm'],
    target: 'es2022',
    platform: 'browser',
    noExternal: ['zod'],
    splitting: false,
    sourcemap: false,
    minify: true,
    clean: true,
    dts: false,
    silent: true,
    tsconfig: 'src/dashboard/tsconfig.json',
    publicDir: 'src/dashboard/public',
  },
  {
    // IGNITE's per-message tools (agents call them from their shells once per message): one self-contained
    // CommonJS file each (no ESM loader, no shared chunks), node built-ins only, so they start like `node -e 0`.
    entry: { 'ignite-mime': 'src/cli/ignite-mime-main.ts', 'ignite-send': 'src/cli/ignite-send-main.ts' },
    format: ['cjs'],
    target: 'node20',
    platform: 'node',
    splitting: false,
    sourcemap: true,
    clean: false,
    dts: false,
    silent: true,
    banner: { js: '#!/usr/bin/env node' },
  },
]);
