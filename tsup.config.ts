import { defineConfig } from 'tsup';

// The CLI entry is bundled so `musubi --help` starts fast; commands import their heavy
// modules lazily (dynamic import), which tsup splits into separate chunks.
export default defineConfig({
  entry: { cli: 'src/cli/main.ts', index: 'src/index.ts', yadon: 'src/cli/yadon-main.ts' },
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  splitting: true,
  sourcemap: true,
  clean: true,
  dts: false,
  banner: { js: '#!/usr/bin/env node' },
});
