import { agentSyncGateway } from './build-gateways.js';
import type { AgentSyncSetup } from './gateway-setups.js';
import { openHub, type Hub, type OpenHubOptions } from './hub.js';

/**
 * Starts `musubi agent-sync serve`: the agent_sync gateway alone, bound before the store opens so
 * clients connect within moments of start (their requests wait for the bus), then the hub (store, bus,
 * task registry) under it. The standalone server records no attachments in the agent directory. Rejects
 * with the gateway's start error (GATEWAY_ADDRESS_IN_USE…) or the store's, after closing what started.
 */
export async function startAgentSyncServer(
  options: OpenHubOptions & { readonly setup: Omit<AgentSyncSetup, 'isBridged'> },
): Promise<Hub> {
  const opening = openHub(options);
  let gateway: ReturnType<typeof agentSyncGateway>;
  try {
    // Building the gateway checks its setup (a refused bind throws here): the opened hub is closed then.
    gateway = agentSyncGateway(
      { bus: opening.then((hub) => hub.bus), logger: options.logger, clock: options.clock },
      { ...options.setup, isBridged: false },
    );
    await gateway.start();
  } catch (err) {
    await opening.then((hub) => hub.close()).catch(() => undefined); // the start error matters more
    throw err;
  }
  let hub: Hub;
  try {
    hub = await opening;
  } catch (err) {
    await gateway.stop().catch(() => undefined); // the store's error matters more
    throw err;
  }
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => (closing ??= gateway.stop().finally(() => hub.close()));
  return { ...hub, gateways: [gateway], close, [Symbol.asyncDispose]: close };
}
