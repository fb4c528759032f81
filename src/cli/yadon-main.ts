// The `yadon` command: `yadon <args>` runs `musubi yadon <args>`. argv[1] becomes the musubi entry
// beside this file, so a daemon the CLI starts (`<entry> yadon host …`) runs the same program.
import { fileURLToPath } from 'node:url';

const mainEntry = fileURLToPath(
  new URL(import.meta.url.endsWith('.ts') ? './main.ts' : './cli.js', import.meta.url),
);
process.argv.splice(1, 1, mainEntry, 'yadon');
await import('./main.js');
