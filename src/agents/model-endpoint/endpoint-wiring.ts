/**
 * How one agent CLI is pointed at a model endpoint (musubi's own, or any compatible proxy): the
 * environment to set and the config files to write in a folder of the caller's. Each CLI backend exports
 * one {@link WireCli}; `musubi dev model-endpoint --print-env <cli>` and the real-agents tests use them.
 */
export interface EndpointWiring {
  /** Variables to set for the CLI process (added to its allowlisted environment). */
  readonly env: Readonly<Record<string, string>>;
  /** Files to write before the CLI starts (absolute paths inside `configDir`). */
  readonly files: readonly { readonly path: string; readonly content: string }[];
  /** The model name to pass when the CLI needs one that the endpoint's provider entry names. */
  readonly model?: string;
}

/** Inputs of a {@link WireCli}. */
export interface WireCliOptions {
  /** Base URL of the endpoint (`http://127.0.0.1:<port>`). */
  readonly url: string;
  /** A private folder for the CLI's config and state (it stands in for the CLI's home folder). */
  readonly configDir: string;
  /** The key the CLI sends (the local endpoint accepts any); default `musubi-local`. */
  readonly apiKey?: string;
}

/** Builds the wiring of one CLI. */
export type WireCli = (options: WireCliOptions) => EndpointWiring;

/** The key sent to the local endpoint when the caller gives none; it accepts any. */
export const LOCAL_API_KEY = 'musubi-local';
