import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const CLI = join(REPO, 'dist', 'cli.js');
const hasBuild = existsSync(CLI);
if (!hasBuild) {
  const why =
    'install-from-clone: dist/cli.js is missing; `npm test` builds it before the tests (npm run build)';
  if (process.env['CI'] === 'true') throw new Error(why);
  console.warn(`skipped: ${why}`);
}

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

// The README's "Use your own agents": `npm link` from the clone puts `musubi` on PATH; here the global
// prefix is a temporary folder, so nothing outside it changes.
describe.runIf(hasBuild)('install from a clone', () => {
  it(
    'npm link puts musubi on PATH, and in a fresh folder init and run work',
    { timeout: 120_000 },
    async () => {
      const prefix = await mkdtemp(join(tmpdir(), 'musubi-prefix-'));
      const fresh = await mkdtemp(join(tmpdir(), 'musubi-fresh-'));
      dirs.push(prefix, fresh);
      execFileSync('npm', ['link', '--no-audit', '--no-fund', '--silent'], {
        cwd: REPO,
        env: { ...process.env, npm_config_prefix: prefix },
        encoding: 'utf8',
      });
      const env = {
        PATH: `${join(prefix, 'bin')}${delimiter}${dirname(process.execPath)}${delimiter}/usr/bin:/bin`,
        HOME: fresh,
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@t',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@t',
      };
      const musubi = (...args: string[]) =>
        execFileSync('musubi', args, { cwd: fresh, env, encoding: 'utf8' });
      const pkg = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as { version: string };
      expect(musubi('--version').trim()).toBe(pkg.version);
      expect(musubi('init')).toContain('wrote');
      const git = (...args: string[]) => execFileSync('git', args, { cwd: fresh, env, encoding: 'utf8' });
      git('init', '-q');
      await writeFile(join(fresh, 'README.md'), 'hi\n');
      git('add', 'README.md');
      git('commit', '-q', '-m', 'init');
      const out = JSON.parse(
        musubi('run', '--agent', 'scripted', '--json', '--', '- write hello.txt hello'),
      ) as {
        status: string;
        branch: string;
      };
      expect(out.status).toBe('succeeded');
      expect(git('show', `${out.branch}:hello.txt`)).toBe('hello\n');
    },
  );
});
