import { defineConfig } from 'tsup';

// The CLI entry is bundled so `musubi --help` starts fast; commands import their heavy
// modules lazily (dynamic import), which tsup splits into separate chunks.
// The dashboard (src/dashboard) is a separate browser bundle in dist/dashboard, which the HTTP
// gateway serves; its static files come from src/dashboard/public.
export default defineConfig([
  {
    entry: { cli: 'src/cli/main.ts', index: 'src/index.ts', yadon: 'src/cli/yadon-main.ts' },
    format: ['esm'],
    target: 'node20',
    platform: 'node',
    splitting: true,
    sourcemap: true,
    clean: ['!dashboard/**'],
    dts: false,
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
    tsconfig: 'src/dashboard/tsconfig.json',
    publicDir: 'src/dashboard/public',
  },
]);
