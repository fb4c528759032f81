/** Mode of every file an IGNITE writer creates or rewrites (spec/ignite.md 2.3, deviation 15). */
export const MESSAGE_FILE_MODE = 0o600;
