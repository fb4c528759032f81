// Runs every bench/*.bench.ts (or the ones named on the command line) one after another, each in its
// own process so one workload's heap and handles never skew the next.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.includes(w)))
  .sort();
let failed = 0;
for (const file of files) {
  console.log(`\n## ${file}\n`);
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--expose-gc', join(here, file)], {
    stdio: 'inherit',
  });
  if (run.status !== 0) {
    failed++;
    console.error(`bench: ${file} failed (exit ${String(run.status ?? run.signal)})`);
  }
}
process.exitCode = failed > 0 ? 1 : 0;
