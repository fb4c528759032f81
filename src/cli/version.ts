import pkg from '../../package.json' with { type: 'json' };

/** The musubi version from package.json (inlined by the bundler, so it never drifts). */
export const version: string = pkg.version;
