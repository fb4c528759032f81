import type { EnvelopeInput } from '../../core/envelope.js';
import type { SecretMask } from '../../core/secret-mask.js';
import type { McpBus } from './mcp-tool-context.js';

/**
 * The bus as an agent's MCP tools use it, with every secret musubi passed to the agent masked in what
 * the agent sends (body, headers, type, thread): an agent that pastes its API key into a message must
 * not get it stored and served. Reads pass through untouched. With nothing to mask it is `bus` itself.
 */
export function withMaskedSends(bus: McpBus, mask: SecretMask): McpBus {
  if (mask.isEmpty) return bus;
  const masked = <T extends Omit<EnvelopeInput, 'to'>>(input: T): T => mask.maskDeep(input);
  return {
    send: (input) => bus.send(masked(input)),
    broadcast: (input, to) => bus.broadcast(masked(input), to),
    receive: (...args) => bus.receive(...args),
    ack: (...args) => bus.ack(...args),
    peek: (...args) => bus.peek(...args),
    count: (...args) => bus.count(...args),
    listMailboxes: (...args) => bus.listMailboxes(...args),
  };
}
