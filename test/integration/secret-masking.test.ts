import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { HubRunners } from '../../src/hub/hub-runners.js';
import { createHubRunners } from '../../src/hub/hub-runners.js';
import { createSystemClock } from '../../src/core/clock.js';
import { configSchema } from '../../src/core/config.schema.js';
import { createIdGenerator } from '../../src/core/ids.js';
import { createSilentLogger } from '../../src/core/logger.js';
import { FAKE_BIN_DIR } from '../fakes/fake-cli-harness.js';
import { bundleCli, type BundledCli } from '../fixtures/bundled-cli.js';
import { startHttpHub } from '../fixtures/http-hub.js';

// What an agent CLI prints when its key is refused (issue #35): the key musubi passed it, verbatim.
const BODY = 'Zq9FAKEsecretBody7781xyz';
const KEY = `sk-ant-api03-${BODY}`;
const MASKED = 'sk-ant-…[masked]';

let musubi: BundledCli;
beforeAll(async () => {
  musubi = await bundleCli();
});
afterAll(async () => {
  await musubi.remove();
});

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

/**
 * The fake claude first on PATH with ANTHROPIC_API_KEY set (claude inherits ANTHROPIC_*): it answers
 * with the key in its reply, writes the API's refusal of it to stderr and exits 1.
 */
const env = {
  PATH: `${FAKE_BIN_DIR}${delimiter}${process.env['PATH'] ?? ''}`,
  LLM_BACKEND: '',
  MUSUBI_STORE: '',
  ANTHROPIC_API_KEY: KEY,
  FAKE_AGENT_TEXT: `I used the key ${KEY}`,
  FAKE_AGENT_STDERR: `API Error: 401 {"type":"error","error":{"message":"invalid x-api-key ${KEY}"}}`,
  FAKE_AGENT_EXIT_CODE: '1',
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@t',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@t',
};
/** The fake's knobs reach claude only through passEnv, as a user's own variables would. */
const MUSUBI_YAML = 'backends:\n  claude:\n    passEnv: [FAKE_AGENT_*]\n';

function git(dir: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd: dir, env: { ...process.env, ...env }, encoding: 'utf8' });
}

async function repoWithConfig(): Promise<string> {
  const dir = await tempDir('musubi-secret-');
  git(dir, 'init', '-q');
  await writeFile(join(dir, 'musubi.yaml'), MUSUBI_YAML);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'init');
  return dir;
}

/** Every byte of a SQLite store: the database file and, when present, its WAL and shared memory. */
async function storeBytes(db: string): Promise<string> {
  const parts = [db, `${db}-wal`, `${db}-shm`].filter((f) => existsSync(f));
  const bytes = await Promise.all(parts.map((f) => readFile(f)));
  return Buffer.concat(bytes).toString('latin1');
}

/** `text` as the store holds it: JSON text in UTF-8, read here byte by byte. */
function asStored(text: string): string {
  return Buffer.from(text, 'utf8').toString('latin1');
}

describe('secrets an agent prints', { timeout: 180_000 }, () => {
  it('are masked in the store, the terminal and the run record of musubi run', async () => {
    const dir = await repoWithConfig();
    const run = await musubi.run(
      [
        'run',
        '--agent',
        'claude',
        '--repo',
        dir,
        '--workers',
        '1',
        '--test',
        'printenv ANTHROPIC_API_KEY',
        '--json',
        '--',
        '- write a.txt A',
      ],
      { cwd: dir, env, timeoutMs: 120_000 },
    );
    const terminal = `${run.stdout}\n${run.stderr}`;
    expect(terminal).not.toContain(BODY);
    expect(terminal).toContain(MASKED);
    const { runId } = JSON.parse(run.stdout) as { runId: string };

    const shown = await musubi.run(['runs', 'show', runId, '--repo', dir], { cwd: dir, env });
    expect(`${shown.stdout}${shown.stderr}`).not.toContain(BODY);

    const stored = await storeBytes(join(dir, '.musubi', 'bus.db'));
    expect(stored).toContain(asStored(runId));
    expect(stored).not.toContain(BODY);
    expect(stored).toContain(asStored(MASKED));
  });

  it('are masked in what musubi agent run prints', async () => {
    const dir = await repoWithConfig();
    const run = await musubi.run(['agent', 'run', '--backend', 'claude', '--cwd', dir, 'hello'], {
      cwd: dir,
      env,
      timeoutMs: 60_000,
    });
    expect(run.code).not.toBe(0);
    expect(`${run.stdout}\n${run.stderr}`).not.toContain(BODY);
    expect(run.stderr).toContain(`invalid x-api-key ${MASKED}`);
  });

  it('are masked in what the turn routes serve', async () => {
    const cwd = await tempDir('musubi-secret-turn-');
    const clock = createSystemClock();
    let runners: HubRunners | undefined;
    await using hub = await startHttpHub({
      withBus: (bus) => {
        runners = createHubRunners({
          config: configSchema.parse({ backends: { claude: { passEnv: ['FAKE_AGENT_*'] } } }),
          env,
          installed: new Set(),
          bus,
          recordTurns: { clock, ids: createIdGenerator(clock), logger: createSilentLogger() },
          flags: { backend: 'claude' },
        });
        return { turns: runners.turns! };
      },
    });
    const result = await runners!.runnerFor('alice').run({ prompt: 'hello', cwd, timeoutMs: 30_000 });
    expect(result.isError).toBe(true);

    const list = await (await fetch(`${hub.base}/api/turns?agent=alice`)).text();
    const { turns } = JSON.parse(list) as { turns: { id: string }[] };
    expect(turns).toHaveLength(1);
    const detail = await (await fetch(`${hub.base}/api/turns/${turns[0]!.id}`)).text();
    const byAgent = await (await fetch(`${hub.base}/api/agents/alice/turns`)).text();
    for (const served of [list, detail, byAgent]) {
      expect(served).not.toContain(BODY);
      expect(served).toContain(MASKED);
    }
  });
});
