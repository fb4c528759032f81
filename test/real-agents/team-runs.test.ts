import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_WIRINGS } from '../../src/agents/model-endpoint/cli-wirings.js';
import { createModelEndpoint } from '../../src/agents/model-endpoint/create-model-endpoint.js';
import { expectNoLiveChildren } from '../fixtures/process-children.js';
import { runCli } from '../fixtures/run-cli.js';
import { isolatedEnv, makeSandbox, realCliGuard, writeWiringFiles } from './real-cli.js';

const TEAM_TIMEOUT_MS = 300_000;
const claude = realCliGuard('claude');

// A whole team on the real claude CLI against musubi's model endpoint: yadoran decomposes (JSON from the
// endpoint), yadon-1/2 implement, document and review through claude's own Write tool, the tester runs the
// sample's tests over agent_sync through claude's Bash tool, the scribe appends the changelog.
describe.runIf(claude !== undefined)('real claude - team runs', () => {
  it(
    'finishes the demo sample with a yadon three-phase job and an agent_sync round on real claude turns',
    async () => {
      await using sandbox = await makeSandbox();
      await using endpoint = createModelEndpoint();
      const url = await endpoint.start();
      const wiring = CLI_WIRINGS.claude({ url, configDir: join(sandbox.home, '.claude') });
      await writeWiringFiles(wiring.files);
      const env = {
        ...isolatedEnv(sandbox.home),
        ...wiring.env,
        // Inside this sandboxed test claude may bypass permissions as root (docs/agents.md, "Containers and root").
        IS_SANDBOX: '1',
        PATH: `${dirname(claude ?? '')}${delimiter}${dirname(process.execPath)}${delimiter}/usr/bin:/bin`,
      };
      const run = await runCli(['demo', '--state', 'state', '--agent', 'claude'], {
        cwd: sandbox.cwd,
        env,
        timeoutMs: TEAM_TIMEOUT_MS,
      });
      expect(run.stderr).toBe('');
      expect(run.stdout).toMatch(/agents +claude \(real CLI/);
      expect(run.stdout).toMatch(/result +✔ goal met: the sample's tests pass \(8 of 8/);
      expect(run.code).toBe(0);
      const project = join(sandbox.cwd, 'state', 'project');
      for (const file of ['src/slugify.js', 'src/title-case.js', 'src/truncate.js']) {
        expect(existsSync(join(project, file))).toBe(true);
      }
      expect(await readFile(join(project, 'CHANGELOG.md'), 'utf8')).toContain('## Unreleased');
      const tests = spawnSync(process.execPath, ['--test'], {
        cwd: project,
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(tests.status).toBe(0);
      // The files were written by claude's own tools, which the endpoint asked it to call.
      const tools = endpoint.requests().map((r) => r.answer);
      expect(tools).toContain('tool Write');
      expect(tools).toContain('tool Bash');
      await expectNoLiveChildren();
    },
    TEAM_TIMEOUT_MS + 30_000,
  );
});
