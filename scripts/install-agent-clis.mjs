#!/usr/bin/env node
// Installs the pinned real agent CLIs (scripts/agent-clis.json) into the user's cache folder, outside the clone:
// ${MUSUBI_AGENT_CLIS_DIR:-${XDG_CACHE_HOME:-~/.cache}/musubi/agent-clis}/<backend>-<version>/. A folder that
// already holds its version is reused, so a fresh clone in CI does not download ~1.3 GB again.
// Usage: node scripts/install-agent-clis.mjs [backend ...]   (default: all five)
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const pins = JSON.parse(readFileSync(join(here, 'agent-clis.json'), 'utf8'));
const cacheRoot =
  process.env.MUSUBI_AGENT_CLIS_DIR ||
  join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'musubi', 'agent-clis');
const wanted = process.argv.slice(2);
for (const name of wanted) {
  if (!(name in pins)) {
    console.error(`install-agent-clis: unknown backend '${name}' (known: ${Object.keys(pins).join(', ')})`);
    process.exit(2);
  }
}
const names = wanted.length > 0 ? wanted : Object.keys(pins);
mkdirSync(cacheRoot, { recursive: true });
let failed = 0;
for (const name of names) {
  const { package: pkg, version, bin } = pins[name];
  const target = join(cacheRoot, `${name}-${version}`);
  const marker = join(target, '.installed');
  const binPath = join(target, 'node_modules', '.bin', bin);
  if (existsSync(marker) && existsSync(binPath)) {
    console.log(`agent CLI ${name} ${version}: cached at ${target}`);
    continue;
  }
  const partial = `${target}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  writeFileSync(
    join(partial, 'package.json'),
    JSON.stringify({ name: `musubi-agent-cli-${name}`, private: true }),
  );
  const started = Date.now();
  console.log(`agent CLI ${name} ${version}: installing ${pkg}@${version} into ${target} …`);
  try {
    execFileSync(
      'npm',
      ['install', '--no-audit', '--no-fund', '--no-save', '--loglevel=error', `${pkg}@${version}`],
      { cwd: partial, stdio: ['ignore', 'inherit', 'inherit'] },
    );
    writeFileSync(join(partial, '.installed'), `${pkg}@${version}\n`);
    rmSync(target, { recursive: true, force: true });
    renameSync(partial, target);
    console.log(`agent CLI ${name} ${version}: installed in ${Math.round((Date.now() - started) / 1000)} s`);
  } catch (err) {
    failed += 1;
    rmSync(partial, { recursive: true, force: true });
    console.error(
      `agent CLI ${name} ${version}: install failed: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}
process.exit(failed > 0 ? 1 : 0);
