import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../test/fakes/fake-clock.js';
import { configSchema } from '../core/config.schema.js';
import { isMusubiError, MusubiError } from '../core/errors.js';
import { createIdGenerator } from '../core/ids.js';
import { createSilentLogger } from '../core/logger.js';
import type { Gateway, GatewayAddress } from '../gateways/gateway.js';
import type { Bus } from '../bus/bus.types.js';
import { openHub, startHub } from './hub.js';

/** A gateway that records its life cycle and checks the bus is still open when it stops. */
class RecordingGateway implements Gateway {
  constructor(
    readonly name: string,
    private readonly log: string[],
    private readonly bus: () => Bus,
    private readonly isFailingStart = false,
  ) {}
  async start(): Promise<void> {
    if (this.isFailingStart) throw new MusubiError('GATEWAY_UNAVAILABLE', `${this.name} cannot listen`);
    this.log.push(`start ${this.name}`);
  }
  address(): GatewayAddress {
    return { kind: 'tcp', host: '127.0.0.1', port: 0 };
  }
  async stop(): Promise<void> {
    await this.bus().send({ from: this.name, to: 'audit', type: 'stopping' });
    this.log.push(`stop ${this.name}`);
  }
  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }
}

const clock = new FakeClock();
const base = { cwd: '/', logger: createSilentLogger(), clock, ids: createIdGenerator(clock) };
const config = configSchema.parse({ store: 'memory:' });

describe('hub', () => {
  it('stops gateways in reverse start order while the bus is still open, then closes bus and store', async () => {
    const log: string[] = [];
    let bus: Bus | undefined;
    const hub = await startHub({
      ...base,
      config,
      gateways: (deps) => {
        bus = deps.bus;
        return ['a', 'b'].map((n) => new RecordingGateway(n, log, () => deps.bus));
      },
    });
    expect(hub.gateways.map((g) => g.name)).toEqual(['a', 'b']);
    await hub.close();
    await hub.close();
    expect(log).toEqual(['start a', 'start b', 'stop b', 'stop a']);
    const sendErr: unknown = await bus?.send({ from: 'x', to: 'y', type: 't' }).catch((e: unknown) => e);
    expect(isMusubiError(sendErr, 'BUS_CLOSED')).toBe(true);
    const storeErr: unknown = await hub.store.count('audit').catch((e: unknown) => e);
    expect(isMusubiError(storeErr, 'STORE_CLOSED')).toBe(true);
  });

  it('stops the gateway that failed and what started before it, and rethrows, when a gateway cannot start', async () => {
    const log: string[] = [];
    const err: unknown = await startHub({
      ...base,
      config,
      gateways: (deps) => [
        new RecordingGateway('a', log, () => deps.bus),
        new RecordingGateway('b', log, () => deps.bus, true),
      ],
    }).catch((e: unknown) => e);
    expect(isMusubiError(err, 'GATEWAY_UNAVAILABLE')).toBe(true);
    // A gateway may fail after it listened (writing its URL file): it is stopped too, never left half up.
    expect(log).toEqual(['start a', 'stop b', 'stop a']);
  });

  it('opens store, bus and task registry without gateways, and closes them once', async () => {
    const hub = await openHub({ ...base, config });
    expect(hub.gateways).toEqual([]);
    await hub.bus.send({ from: 'a', to: 'b', type: 't' });
    await Promise.all([hub.close(), hub.close()]);
    const sendErr: unknown = await hub.bus.send({ from: 'a', to: 'b', type: 't' }).catch((e: unknown) => e);
    expect(isMusubiError(sendErr, 'BUS_CLOSED')).toBe(true);
    const storeErr: unknown = await hub.store.count('b').catch((e: unknown) => e);
    expect(isMusubiError(storeErr, 'STORE_CLOSED')).toBe(true);
  });
});
