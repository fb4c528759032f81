import { describe, expect, it } from 'vitest';
import config from '../../tsup.config.js';

describe('build - tsup config', () => {
  it('builds every bundle silently, so npm start and npm test do not print hundreds of chunk lines', () => {
    const builds = Array.isArray(config) ? config : [config];
    expect(builds.length).toBeGreaterThan(0);
    for (const build of builds)
      expect(typeof build === 'object' && build !== null && build.silent).toBe(true);
  });
});
