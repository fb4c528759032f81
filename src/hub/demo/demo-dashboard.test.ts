import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../test/fakes/fake-clock.js';
import { demoTeamSource } from './demo-dashboard.js';
import { DEMO_PHASES, DemoProgress } from './demo-progress.js';

describe('demoTeamSource', () => {
  it('names no phase before the run, the running one during it, and the last one after it', async () => {
    const progress = new DemoProgress({ clock: new FakeClock(), onChange: () => undefined });
    const source = demoTeamSource({ progress, members: ['lead'], goal: 'g' });
    const phaseNow = async (): Promise<string | undefined> => (await source.list())[0]?.phase;
    expect(await phaseNow()).toBeUndefined();
    progress.start('setup', 1, 'copying');
    expect(await phaseNow()).toBe('setup');
    for (const phase of DEMO_PHASES) progress.finish(phase);
    // So the stepper draws every phase before it as done instead of all of them as not started.
    expect(await phaseNow()).toBe(DEMO_PHASES.at(-1));
  });
});
