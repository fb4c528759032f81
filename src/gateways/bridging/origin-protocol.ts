/**
 * Envelope header naming the wire protocol a message entered musubi through (`agent-sync`, `ignite`,
 * `yadon`, `neko`). Gateways set it where they turn their wire into envelopes, so the gateway that
 * delivers the message knows how it was written (docs/bridging.md). Absent: sent on the bus directly
 * (MCP, HTTP, a team).
 */
export const ORIGIN_HEADER = 'x-musubi-protocol';

/** The four seed protocols that translate on delivery. */
export type WireProtocol = 'agent-sync' | 'ignite' | 'yadon' | 'neko';

// One frozen object per protocol: every message a gateway sends carries the same headers, and the bus
// and stores keep a frozen headers object as it is instead of copying it.
const ORIGIN_HEADERS: Readonly<Record<WireProtocol, Readonly<Record<string, string>>>> = {
  'agent-sync': Object.freeze({ [ORIGIN_HEADER]: 'agent-sync' }),
  ignite: Object.freeze({ [ORIGIN_HEADER]: 'ignite' }),
  yadon: Object.freeze({ [ORIGIN_HEADER]: 'yadon' }),
  neko: Object.freeze({ [ORIGIN_HEADER]: 'neko' }),
};

/** The headers that mark an envelope as coming from `protocol` (frozen, shared by every caller). */
export function originHeaders(protocol: WireProtocol): Readonly<Record<string, string>> {
  return ORIGIN_HEADERS[protocol];
}

/** True when the envelope entered through `protocol`. */
export function isFrom(
  envelope: { readonly headers: Readonly<Record<string, string>> },
  protocol: WireProtocol,
): boolean {
  return envelope.headers[ORIGIN_HEADER] === protocol;
}
