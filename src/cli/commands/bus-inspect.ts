import type { Command } from 'commander';
import type { StoredEvent } from '../../core/events.js';
import type { CliContext } from '../cli-context.js';
import { parseNonNegativeInt } from '../option-parsers.js';
import { writeJson } from '../output.js';
import { stopSignals } from '../stop-signals.js';

function formatEvent(event: StoredEvent): string {
  const { cursor, at, type, ...rest } = event;
  return `${cursor}\t${new Date(at).toISOString()}\t${type}\t${JSON.stringify(rest)}\n`;
}

function registerPeek(bus: Command, ctx: CliContext): void {
  bus
    .command('peek <mailbox>')
    .description('counts and the next messages of a mailbox, nothing claimed')
    .option('--limit <n>', 'how many messages to show', parseNonNegativeInt('--limit'), 10)
    .option('--json', 'machine-readable output')
    .action(async (mailbox: string, flags: { limit: number; json?: boolean }) => {
      await using opened = await ctx.openBus();
      const counts = await opened.bus.count(mailbox);
      const messages = await opened.bus.peek(mailbox, { limit: flags.limit });
      if (flags.json) {
        writeJson(ctx.stdout, { counts, messages });
        return;
      }
      ctx.stdout.write(
        `${mailbox}: ${counts.total} message(s): ${counts.ready} ready, ${counts.delayed} delayed, ${counts.leased} leased; ${counts.deadLetters} dead\n`,
      );
      for (const m of messages) {
        const e = m.envelope;
        ctx.stdout.write(
          `${e.id}\t${m.state}\t${e.priority}\t${e.type}\tfrom ${e.from}\tattempt ${e.attempt}\n`,
        );
      }
    });
  bus
    .command('mailboxes')
    .description('every mailbox with its counts')
    .option('--json', 'machine-readable output')
    .action(async (flags: { json?: boolean }) => {
      await using opened = await ctx.openBus();
      const list = await opened.bus.listMailboxes();
      if (flags.json) writeJson(ctx.stdout, list);
      else if (list.length === 0) ctx.stdout.write('no mailboxes: nothing was sent on this store yet\n');
      else
        for (const c of list)
          ctx.stdout.write(
            `${c.mailbox}\t${c.ready} ready\t${c.delayed} delayed\t${c.leased} leased\t${c.deadLetters} dead\n`,
          );
    });
}

function registerDlq(bus: Command, ctx: CliContext): void {
  const dlq = bus.command('dlq').description('dead letters: messages that ran out of attempts');
  dlq
    .command('list [mailbox]')
    .description('list dead letters, optionally of one mailbox')
    .option('--limit <n>', 'at most this many', parseNonNegativeInt('--limit'), 100)
    .option('--json', 'machine-readable output')
    .action(async (mailbox: string | undefined, flags: { limit: number; json?: boolean }) => {
      await using opened = await ctx.openBus();
      const letters = await opened.bus.listDeadLetters({
        limit: flags.limit,
        ...(mailbox === undefined ? {} : { mailbox }),
      });
      if (flags.json) writeJson(ctx.stdout, letters);
      else {
        for (const d of letters) {
          ctx.stdout.write(
            `${d.envelope.id}\t${d.mailbox}\t${new Date(d.deadAt).toISOString()}\t${d.envelope.type}\t${d.reason}\n`,
          );
        }
        if (letters.length === 0) ctx.stdout.write('no dead letters\n');
      }
    });
  dlq
    .command('retry <envelope-id>')
    .description('move a dead letter back into its mailbox with its attempts reset')
    .option('--json', 'machine-readable output')
    .action(async (envelopeId: string, flags: { json?: boolean }) => {
      await using opened = await ctx.openBus();
      const letters = await opened.bus.retryDeadLetter(envelopeId);
      if (flags.json) writeJson(ctx.stdout, letters);
      else for (const d of letters) ctx.stdout.write(`requeued ${d.envelope.id} into ${d.mailbox}\n`);
    });
  dlq
    .command('discard <envelope-id>')
    .description('delete a dead letter for good (in every mailbox holding one with this id)')
    .option('--json', 'machine-readable output')
    .action(async (envelopeId: string, flags: { json?: boolean }) => {
      await using opened = await ctx.openBus();
      const letters = await opened.bus.discardDeadLetter(envelopeId);
      if (flags.json) writeJson(ctx.stdout, letters);
      else for (const d of letters) ctx.stdout.write(`discarded ${d.envelope.id} from ${d.mailbox}\n`);
    });
}

function registerEvents(bus: Command, ctx: CliContext): void {
  bus
    .command('events')
    .description('print the event log from a cursor; --follow keeps printing new events')
    .option('--from <cursor>', 'first cursor to print (default: the start)', parseNonNegativeInt('--from'), 1)
    .option('--follow', 'keep printing new events until interrupted')
    .option('--limit <n>', 'without --follow: at most this many', parseNonNegativeInt('--limit'), 1000)
    .option('--json', 'one JSON object per line')
    .action(async (flags: { from: number; follow?: boolean; limit: number; json?: boolean }) => {
      await using opened = await ctx.openBus();
      const print = (e: StoredEvent): void =>
        flags.json ? writeJson(ctx.stdout, e) : void ctx.stdout.write(formatEvent(e));
      const after = Math.max(0, flags.from - 1);
      if (!flags.follow) {
        for (const e of await opened.bus.readEvents({ after, limit: flags.limit })) print(e);
        return;
      }
      const stop = stopSignals();
      try {
        for await (const e of opened.bus.events({ after, signal: stop.signal })) print(e);
      } finally {
        stop.dispose();
      }
    });
}

/** Registers the read-only and dead-letter bus commands: peek, mailboxes, dlq, events. */
export function registerBusInspectCommands(bus: Command, ctx: CliContext): void {
  registerPeek(bus, ctx);
  registerDlq(bus, ctx);
  registerEvents(bus, ctx);
}
