import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { waitUntil } from '../../src/agents/process/stop-ladder.js';

/** The folder holding the fake claude, codex, gemini, copilot and opencode executables. */
export const FAKE_BIN_DIR = fileURLToPath(new URL('./bin/', import.meta.url));

/**
 * A parent environment for runners under test: the fakes first on PATH, plus variables the allowlist
 * must drop (a nested-run marker, an unrelated secret) so tests can check they never arrive.
 */
export function fakeParentEnv(extra: Record<string, string> = {}): Record<string, string | undefined> {
  return {
    PATH: `${FAKE_BIN_DIR}${delimiter}${process.env['PATH'] ?? ''}`,
    HOME: process.env['HOME'],
    LANG: 'C.UTF-8',
    CLAUDECODE: '1',
    UNRELATED_SECRET: 'must-not-leak',
    ...extra,
  };
}

/** A fresh temp dir; remove it with the returned `cleanup`. */
export async function makeTempDir(
  prefix = 'musubi-agent-',
): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

const recordSchema = z.object({
  name: z.string(),
  argv: z.array(z.string()),
  cwd: z.string(),
  prompt: z.string(),
  stdin: z.string(),
  env: z.record(z.string(), z.string()),
});

/** What a fake CLI recorded about its invocation (FAKE_AGENT_RECORD). */
export type FakeRecord = z.infer<typeof recordSchema>;

export async function readRecord(path: string): Promise<FakeRecord> {
  return recordSchema.parse(JSON.parse(await readFile(path, 'utf8')));
}

/** Reads the `<role> <pid>` lines a fake wrote to FAKE_AGENT_PID_FILE. */
export async function readPids(path: string): Promise<Record<string, number>> {
  const text = await readFile(path, 'utf8');
  const pids: Record<string, number> = {};
  for (const line of text.trim().split('\n')) {
    const [role, pid] = line.split(' ');
    if (role !== undefined && pid !== undefined) pids[role] = Number(pid);
  }
  return pids;
}

/** Waits for `condition` with a deadline; throws when it does not hold in time (no fixed sleeps). */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 5000,
  what = 'condition',
): Promise<void> {
  let last = false;
  const poll = async (): Promise<void> => {
    last = await condition();
  };
  await poll();
  const deadline = Date.now() + timeoutMs;
  while (!last && Date.now() < deadline) {
    await waitUntil(() => false, 10);
    await poll();
  }
  if (!last) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}
