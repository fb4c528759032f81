import { jetstream, jetstreamManager, type ConsumerMessages, type JetStreamClient } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { afterAll, describe, expect, it } from 'vitest';
import {
  deleteNamespace,
  natsUnavailableReason,
  SHARED_NATS,
  uniquePrefix,
  waitUntil,
} from '../../../test/fixtures/nats-server.js';
import { JournalFollower, PROGRESS_CHECK_MS } from './journal-follower.js';
import { journalNames } from './journal-names.js';

const unavailable = await natsUnavailableReason();
const created: string[] = [];
afterAll(async () => {
  for (const prefix of created.splice(0)) await deleteNamespace(SHARED_NATS, prefix);
});

/** `js` whose first consumer's message feed the test can stop behind the follower's back. */
function withFirstFeed(js: JetStreamClient): { js: JetStreamClient; first: Promise<ConsumerMessages> } {
  let found: (messages: ConsumerMessages) => void = () => undefined;
  const first = new Promise<ConsumerMessages>((resolve) => (found = resolve));
  let isFirst = true;
  const consumers = new Proxy(js.consumers, {
    get(target, key, receiver) {
      if (key !== 'get') return Reflect.get(target, key, receiver) as unknown;
      return async (...args: Parameters<typeof target.get>) => {
        const consumer = await target.get(...args);
        if (!isFirst) return consumer;
        isFirst = false;
        const consume = consumer.consume.bind(consumer);
        consumer.consume = async (options) => {
          const messages = await consume(options);
          found(messages);
          return messages;
        };
        return consumer;
      };
    },
  });
  return {
    js: new Proxy(js, { get: (t, k, r) => (k === 'consumers' ? consumers : Reflect.get(t, k, r)) }),
    first,
  };
}

describe.skipIf(unavailable !== null)(`JournalFollower on ${SHARED_NATS}`, () => {
  it('replaces a consumer that stopped delivering while records wait, starting after what was followed', async () => {
    const prefix = uniquePrefix('follower');
    created.push(prefix);
    const names = journalNames(prefix);
    const nc = await connect({ servers: SHARED_NATS });
    try {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: names.stream, subjects: [names.messageSubjects, names.eventSubject] });
      const real = jetstream(nc);
      for (let i = 1; i <= 3; i++) await real.publish(names.eventSubject, `before-${i}`);
      const seen: number[] = [];
      const { js, first } = withFirstFeed(real);
      const follower = await JournalFollower.start({
        js,
        names,
        onRecord: (msg) => seen.push(msg.seq),
        followedSeq: () => seen.at(-1) ?? 0,
      });
      try {
        await waitUntil(() => seen.length === 1, 5_000, 'the catch-up (newest record per subject)');
        expect(seen).toEqual([3]);
        // The first consumer goes quiet, as one did when the journal's leader died under it.
        (await first).stop();
        for (let i = 1; i <= 4; i++) await real.publish(names.eventSubject, `after-${i}`);
        await waitUntil(() => seen.length === 5, 4 * PROGRESS_CHECK_MS, 'the records sent after the stall');
        expect(seen).toEqual([3, 4, 5, 6, 7]);
      } finally {
        follower.close();
      }
    } finally {
      await nc.close();
    }
  }, 20_000);
});
