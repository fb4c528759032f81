/** Where a started gateway listens: a TCP address, a Unix socket path, or a folder. */
export type GatewayAddress =
  | { readonly kind: 'tcp'; readonly host: string; readonly port: number }
  | { readonly kind: 'unix'; readonly path: string }
  | { readonly kind: 'dir'; readonly path: string };

/**
 * The Gateway port: one wire protocol in, bus calls out. Gateways own framing and translation;
 * business rules stay in the bus and teams. A gateway never talks to another gateway or to a store.
 */
export interface Gateway extends AsyncDisposable {
  readonly name: string;
  /** Resolves once listening; afterwards {@link Gateway.address} is valid. Rejects with GATEWAY_UNAVAILABLE. */
  start(): Promise<void>;
  /** The bound address (after start). */
  address(): GatewayAddress;
  /** Stops accepting, lets in-flight frames finish, closes clients. Idempotent. */
  stop(): Promise<void>;
}
