import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSystemClock } from '../../src/core/clock.js';
import type { StoredEvent } from '../../src/core/events.js';
import { openStore } from '../../src/hub/open-store.js';
import { FAKE_BIN_DIR } from '../fakes/fake-cli-harness.js';
import { expectNoLiveChildren } from '../fixtures/process-children.js';
import { runCli } from '../fixtures/run-cli.js';

/** What `npm start` runs (`node dist/cli.js demo`), from source, with a generous limit for a loaded machine. */
const DEMO_TIMEOUT_MS = 90_000;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'musubi-demo-test-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function busEvents(storeFile: string): Promise<StoredEvent[]> {
  const store = await openStore({
    url: `sqlite:${storeFile}`,
    cwd: dir,
    clock: createSystemClock(),
    pollIntervalMs: 25,
  });
  try {
    return await store.readEvents({ after: 0, limit: 100_000 });
  } finally {
    await store.close();
  }
}

describe('musubi demo', () => {
  it('finishes the sample with the scripted team, retries the dead letter and exits 0', async () => {
    const run = await runCli(['demo', '--state', 'state'], { cwd: dir, timeoutMs: DEMO_TIMEOUT_MS });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);

    // The terminal: header, one bar per phase, the summary with the dashboard URL.
    expect(run.stdout).toMatch(/^musubi demo: Finish the string-utils library/m);
    expect(run.stdout).toMatch(/on yadon \(unix sockets/);
    expect(run.stdout).toMatch(/on agent_sync \(tcp 127\.0\.0\.1:\d+\)/);
    for (const phase of ['setup', 'plan', 'implement', 'docs', 'review', 'test', 'changelog', 'verify']) {
      expect(run.stdout).toMatch(new RegExp(`^✔ ${phase} +\\[█+\\]`, 'm'));
    }
    expect(run.stdout).toMatch(/^summary$/m);
    expect(run.stdout).toMatch(
      /result +✔ goal met: the sample's tests pass \(8 of 8; before: 3 of 5 failing\)/,
    );
    expect(run.stdout).toMatch(/1 dead-lettered · 1 retried from the dead letters/);
    expect(run.stdout).toMatch(
      /retries +scribe: 2 retries with backoff, 1 dead-lettered, 1 retried from the dead letters/,
    );
    expect(run.stdout).toMatch(/time +\d+\.\d s/);
    expect(run.stdout).toMatch(
      /dashboard +http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{43} \(stopped with the run/,
    );

    // The scratch copy really changed, as the goal says; the bundled sample did not.
    const project = join(dir, 'state', 'project');
    for (const file of ['src/slugify.js', 'src/title-case.js', 'src/truncate.js']) {
      expect(run.stdout).toContain(`+ ${file}`);
      expect(existsSync(join(project, file))).toBe(true);
    }
    expect(await readFile(join(project, 'src', 'slugify.js'), 'utf8')).toMatch(
      /^export function slugify\(text\)/,
    );
    const changelog = await readFile(join(project, 'CHANGELOG.md'), 'utf8');
    expect(changelog).toMatch(/^# Changelog\n/);
    expect(changelog).toContain('## Unreleased');
    expect(changelog).toContain('src/slugify.js');
    expect(changelog).toContain('8 of 8 tests pass');
    expect(existsSync(new URL('../../examples/demo-project/src/slugify.js', import.meta.url))).toBe(false);

    // The sample's own tests pass on the changed copy.
    const tests = spawnSync(process.execPath, ['--test'], {
      cwd: project,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(tests.status).toBe(0);

    // On the bus: the scribe's task failed, was dead-lettered, retried from there and acked.
    const events = await busEvents(join(dir, 'state', 'bus.db'));
    const scribe = events.filter((e) => 'mailbox' in e && e.mailbox === 'scribe');
    const types = scribe.map((e) => e.type);
    expect(types.filter((t) => t === 'message.nacked')).toHaveLength(2);
    expect(types).toContain('message.dead_lettered');
    expect(types).toContain('escalation');
    expect(types.indexOf('message.requeued')).toBeGreaterThan(types.indexOf('message.dead_lettered'));
    expect(types.at(-1)).toBe('message.acked');
    // Both protocols carried work: yadon worker mailboxes and the agent_sync peers' mailboxes.
    const mailboxes = new Set(events.flatMap((e) => ('mailbox' in e ? [e.mailbox] : [])));
    expect(mailboxes).toContain('yadon-1');
    expect(mailboxes).toContain('tester');

    // Nothing is left behind: the yadon socket folder is gone, no child process lives on.
    const socketDir = /unix sockets in (\S+)\)/.exec(run.stdout)?.[1];
    expect(socketDir).toBeDefined();
    expect(existsSync(socketDir ?? '')).toBe(false);
    await expectNoLiveChildren();
  }, 120_000);

  it('runs the same team on an agent CLI chosen with --agent and reports that the goal was not met', async () => {
    // The fake claude answers every prompt with an echo: it writes no file, so the goal stays open.
    const env = { PATH: `${FAKE_BIN_DIR}${delimiter}${process.env['PATH'] ?? ''}` };
    const run = await runCli(['demo', '--state', 'state', '--agent', 'claude'], {
      cwd: dir,
      env,
      timeoutMs: DEMO_TIMEOUT_MS,
    });
    // As root (CI) claude may not bypass permissions outside a sandbox: said once, before the run.
    expect(run.stderr).toBe(
      process.getuid?.() === 0
        ? 'musubi: warning: running as root: claude uses --permission-mode acceptEdits (file edits only, shell commands are refused); set IS_SANDBOX=1 in a container to allow --dangerously-skip-permissions, or run claude as another user (runAs)\n'
        : '',
    );
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/agents +claude \(real CLI/);
    // The manager's answer was no plan, so yadon fell back to one subtask; the tester showed no test totals.
    expect(run.stdout).toMatch(/yadoran could not split the goal/);
    expect(run.stdout).toMatch(/^✘ test +\[/m);
    expect(run.stdout).toMatch(/^✘ verify +\[/m);
    expect(run.stdout).toMatch(/result +✘ goal not met: the sample's tests still fail \(3 of 5 failing/);
    // The injected fault and the dead-letter path do not depend on the backend.
    expect(run.stdout).toMatch(/1 dead-lettered · 1 retried from the dead letters/);
  }, 120_000);

  it('refuses an agent CLI that is not installed, before starting anything', async () => {
    const run = await runCli(['demo', '--state', 'state', '--agent', 'gemini'], {
      cwd: dir,
      env: { PATH: dir },
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("musubi: AGENT_NOT_FOUND: agent CLI 'gemini' not found on PATH");
    expect(existsSync(join(dir, 'state'))).toBe(false);
  });
});
