import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createUser } from '@nats-io/nkeys';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSystemClock } from '../../src/core/clock.js';
import { isMusubiError } from '../../src/core/errors.js';
import { parseNatsUrl } from '../../src/store/nats/nats-location.js';
import { NatsStore } from '../../src/store/nats/nats-store.js';
import { NatsServerProcess, natsUnavailableReason } from '../fixtures/nats-server.js';
import { makeCertificates } from '../fixtures/tls-certificates.js';

// TLS (own CA, a server certificate for a host name only, client certificates verified) and nkey logins
// against nats-server children on free loopback ports. Certificates come from openssl, the seed from
// @nats-io/nkeys; nothing secret is written outside the test's temp folder.
const unavailable = await natsUnavailableReason({ needsBinary: true });
const clock = createSystemClock();
let dir: string;
const servers: NatsServerProcess[] = [];

async function tryOpen(url: string): Promise<unknown> {
  try {
    const store = await NatsStore.open({ location: parseNatsUrl(url), clock });
    await store.close();
    return 'opened';
  } catch (err) {
    return err;
  }
}

beforeAll(async () => {
  if (unavailable !== null) return;
  dir = await mkdtemp(join(tmpdir(), 'musubi-nats-tls-'));
});
afterAll(async () => {
  for (const server of servers) await server[Symbol.asyncDispose]();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe.skipIf(unavailable !== null)('NATS store over TLS and with nkeys', () => {
  it('connects by IP with the CA, a client certificate and the server name; refuses without them', async () => {
    makeCertificates(dir);
    const server = await NatsServerProcess.start({
      extraArgs: [
        '--tls',
        '--tlscert',
        join(dir, 'server.pem'),
        '--tlskey',
        join(dir, 'server.key'),
        '--tlsverify',
        '--tlscacert',
        join(dir, 'ca.pem'),
      ],
    });
    servers.push(server);
    const base = `nats://${server.hostPort}?prefix=tls_${process.pid}&connectTimeoutMs=1500`;
    const files = `&ca=${join(dir, 'ca.pem')}&cert=${join(dir, 'client.pem')}&key=${join(dir, 'client.key')}`;
    expect(await tryOpen(`${base}${files}&servername=nats.test`)).toBe('opened');
    expect(
      await tryOpen(
        `tls://${server.hostPort}?prefix=tls_${process.pid}&connectTimeoutMs=1500${files}&servername=nats.test`,
      ),
    ).toBe('opened');
    for (const refused of [
      `${base}${files}`, // the certificate names nats.test, not 127.0.0.1
      `${base}&ca=${join(dir, 'ca.pem')}&servername=nats.test`, // no client certificate
      base, // no TLS at all
    ]) {
      const err = await tryOpen(refused);
      expect(isMusubiError(err, 'STORE_UNAVAILABLE'), refused).toBe(true);
    }
  }, 60_000);

  it('logs in with an nkey seed from a file or an environment variable, and never shows the seed', async () => {
    const user = createUser();
    const seed = new TextDecoder().decode(user.getSeed());
    const conf = join(dir, 'nkey.conf');
    // The fixture already turns JetStream on (-js -sd): the file only adds the nkey user.
    await writeFile(conf, `authorization { users = [ { nkey: ${user.getPublicKey()} } ] }\n`);
    const server = await NatsServerProcess.start({ extraArgs: ['-c', conf] });
    servers.push(server);
    const seedFile = join(dir, 'user.nk');
    await writeFile(seedFile, `${seed}\n`, { mode: 0o600 });
    const base = `nats://${server.hostPort}?prefix=nk_${process.pid}&connectTimeoutMs=1500`;
    expect(await tryOpen(`${base}&nkey=${seedFile}`)).toBe('opened');
    process.env['MUSUBI_TEST_NKEY_SEED'] = seed;
    try {
      expect(await tryOpen(`${base}&nkeyEnv=MUSUBI_TEST_NKEY_SEED`)).toBe('opened');
    } finally {
      delete process.env['MUSUBI_TEST_NKEY_SEED'];
    }
    const unset = await tryOpen(`${base}&nkeyEnv=MUSUBI_TEST_NKEY_SEED`);
    expect(String((unset as Error).message)).toContain('MUSUBI_TEST_NKEY_SEED is not set');
    const other = new TextDecoder().decode(createUser().getSeed());
    await writeFile(seedFile, other);
    const wrong = await tryOpen(`${base}&nkey=${seedFile}`);
    expect(isMusubiError(wrong, 'STORE_UNAVAILABLE')).toBe(true);
    await writeFile(seedFile, 'not a seed');
    const bad = await tryOpen(`${base}&nkey=${seedFile}`);
    expect(String((bad as Error).message)).toContain('is not a user seed');
    for (const err of [unset, wrong, bad]) {
      expect(
        JSON.stringify({ message: (err as Error).message, details: (err as { details?: unknown }).details }),
      ).not.toContain(seed.slice(2, 20));
      expect(String((err as Error).message)).not.toContain(other.slice(2, 20));
    }
    const none = await tryOpen(base);
    expect(isMusubiError(none, 'STORE_UNAVAILABLE')).toBe(true);
  }, 60_000);
});
