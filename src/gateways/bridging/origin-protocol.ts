/**
 * Envelope header naming the wire protocol a message entered musubi through (`agent-sync`, `ignite`,
 * `yadon`, `neko`). Gateways set it where they turn their wire into envelopes, so the gateway that
 * delivers the message knows how it was written (docs/bridging.md). Absent: sent on the bus directly
 * (MCP, HTTP, a team).
 */
export const ORIGIN_HEADER = 'x-musubi-protocol';

/** The four seed protocols that translate on delivery. */
export type WireProtocol = 'agent-sync' | 'ignite' | 'yadon' | 'neko';

/** The headers that mark an envelope as coming from `protocol`. */
export function originHeaders(protocol: WireProtocol): Record<string, string> {
  return { [ORIGIN_HEADER]: protocol };
}

/** True when the envelope entered through `protocol`. */
export function isFrom(
  envelope: { readonly headers: Readonly<Record<string, string>> },
  protocol: WireProtocol,
): boolean {
  return envelope.headers[ORIGIN_HEADER] === protocol;
}
