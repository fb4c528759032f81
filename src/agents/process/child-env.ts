/**
 * Variables every agent CLI gets from the parent when set: locale, home, PATH, temp dir, terminal and
 * proxy/CA settings. Anything else (tokens of unrelated services, cloud credentials) stays behind unless a
 * backend lists it as an auth variable or the caller adds it explicitly.
 */
export const BASE_ENV_ALLOWLIST: readonly string[] = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'LANG',
  'LANGUAGE',
  'LC_ALL',
  'LC_CTYPE',
  'LC_MESSAGES',
  'TERM',
  'TMPDIR',
  'SHELL',
  'TZ',
  'NO_COLOR',
  'XDG_CONFIG_HOME',
  'XDG_DATA_HOME',
  'XDG_CACHE_HOME',
  'XDG_STATE_HOME',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'NODE_EXTRA_CA_CERTS',
];

/**
 * Variables that make a CLI believe it runs inside another agent's session (and change behaviour or
 * refuse to start, as Claude Code does under `CLAUDECODE=1`). They are never inherited, even when an
 * allowlist pattern matches them.
 */
export const NESTED_RUN_MARKERS: readonly string[] = [
  'CLAUDECODE',
  'CLAUDE_CODE_ENTRYPOINT',
  'CLAUDE_CODE_SSE_PORT',
  'CLAUDE_AGENT_SDK_VERSION',
  'CODEX_SANDBOX',
  'CODEX_SANDBOX_NETWORK_DISABLED',
  'CODEX_THREAD_ID',
  'GEMINI_CLI',
  'COPILOT_CLI',
  'OPENCODE',
  'OPENCODE_PID',
  'MUSUBI_AGENT_RUN',
];

/** Inputs of {@link buildChildEnv}. */
export interface ChildEnvOptions {
  /** The environment to pick from (the daemon's own, passed in by the composition root). */
  readonly source: Readonly<Record<string, string | undefined>>;
  /** Extra names to inherit; a name ending in `*` is a prefix (`GOOGLE_*`). */
  readonly allow?: readonly string[];
  /** Explicit additions; they win over inherited values and are never scrubbed. */
  readonly add?: Readonly<Record<string, string>>;
}

function matches(name: string, pattern: string): boolean {
  return pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : name === pattern;
}

/**
 * Builds the environment of an agent process from an allowlist: the base list, the caller's extra
 * names and prefixes, then explicit additions. Nested-run markers are dropped from what is inherited.
 */
export function buildChildEnv(options: ChildEnvOptions): Record<string, string> {
  const patterns = [...BASE_ENV_ALLOWLIST, ...(options.allow ?? [])];
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.source)) {
    if (value === undefined || NESTED_RUN_MARKERS.includes(name)) continue;
    if (patterns.some((p) => matches(name, p))) env[name] = value;
  }
  return { ...env, ...options.add };
}
