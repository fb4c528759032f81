import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { PRIORITIES, type Priority } from '../../core/envelope.js';
import { MusubiError } from '../../core/errors.js';
import type { CliContext } from '../cli-context.js';
import { collectHeader, parseNonNegativeInt } from '../option-parsers.js';
import { formatEnvelope, writeJson } from '../output.js';
import { registerBusInspectCommands } from './bus-inspect.js';

/** Exit code of `bus receive` when no message arrived in time. */
export const EXIT_RECEIVE_TIMEOUT = 3;

interface SendFlags {
  to: string;
  type: string;
  from: string;
  priority?: Priority;
  id?: string;
  thread?: string;
  header?: Record<string, string>;
  body?: string;
  bodyFile?: string;
  json?: boolean;
}

function parsePriority(value: string): Priority {
  const found = PRIORITIES.find((p) => p === value);
  if (found === undefined)
    throw new MusubiError('USAGE_INVALID', `--priority must be one of ${PRIORITIES.join(', ')}`);
  return found;
}

async function readBody(flags: SendFlags, ctx: CliContext): Promise<string> {
  if (flags.body !== undefined && flags.bodyFile !== undefined) {
    throw new MusubiError('USAGE_INVALID', 'use either --body or --body-file, not both');
  }
  if (flags.bodyFile === undefined) return flags.body ?? '';
  if (flags.bodyFile !== '-') return readFile(flags.bodyFile, 'utf8');
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

function registerSend(bus: Command, ctx: CliContext): void {
  bus
    .command('send')
    .description('send one message; prints the envelope id')
    .requiredOption('--to <mailbox>', 'recipient mailbox')
    .requiredOption('--type <type>', 'message type')
    .option('--from <name>', 'sender name', 'cli')
    .option('--priority <p>', `one of ${PRIORITIES.join(', ')}`, parsePriority)
    .option('--id <id>', 'envelope id (idempotency key)')
    .option('--thread <thread>', 'conversation thread')
    .option('--header <key=value>', 'a header (repeatable)', collectHeader)
    .option('--body <text>', 'message body')
    .option('--body-file <path|->', 'read the body from a file, or stdin with -')
    .option('--json', 'machine-readable output')
    .action(async (flags: SendFlags) => {
      const body = await readBody(flags, ctx);
      await using opened = await ctx.openBus();
      const result = await opened.bus.send({
        to: flags.to,
        type: flags.type,
        from: flags.from,
        body,
        ...(flags.priority === undefined ? {} : { priority: flags.priority }),
        ...(flags.id === undefined ? {} : { id: flags.id }),
        ...(flags.thread === undefined ? {} : { thread: flags.thread }),
        ...(flags.header === undefined ? {} : { headers: flags.header }),
      });
      if (flags.json)
        writeJson(ctx.stdout, {
          id: result.envelope.id,
          isDuplicate: result.isDuplicate,
          envelope: result.envelope,
        });
      else ctx.stdout.write(`${result.envelope.id}\n`);
    });
}

function registerReceive(bus: Command, ctx: CliContext): void {
  bus
    .command('receive <mailbox>')
    .description('claim the next message with a lease; exits 3 when none arrives in time')
    .option('--timeout <ms>', 'how long to wait', parseNonNegativeInt('--timeout'), 30_000)
    .option('--lease <ms>', 'lease length (default from config)', parseNonNegativeInt('--lease'))
    .option('--json', 'machine-readable output')
    .action(async (mailbox: string, flags: { timeout: number; lease?: number; json?: boolean }) => {
      await using opened = await ctx.openBus();
      const controller = new AbortController();
      const onSignal = (): void => controller.abort(new MusubiError('ABORTED', 'interrupted'));
      process.once('SIGINT', onSignal);
      try {
        const delivery = await opened.bus.receive(mailbox, {
          timeoutMs: flags.timeout,
          signal: controller.signal,
          ...(flags.lease === undefined ? {} : { leaseMs: flags.lease }),
        });
        if (delivery === null) {
          ctx.stderr.write(`musubi: no message in ${mailbox} within ${flags.timeout} ms\n`);
          ctx.setExitCode(EXIT_RECEIVE_TIMEOUT);
          return;
        }
        if (flags.json) writeJson(ctx.stdout, delivery);
        else {
          ctx.stdout.write(
            `delivery: ${delivery.deliveryId}\nlease-until: ${new Date(delivery.leaseUntil).toISOString()}\n`,
          );
          ctx.stdout.write(formatEnvelope(delivery.envelope));
        }
      } finally {
        process.off('SIGINT', onSignal);
      }
    });
}

function registerSettle(bus: Command, ctx: CliContext): void {
  bus
    .command('ack <delivery-id>')
    .description('acknowledge a delivery (removes the message)')
    .option('--json', 'machine-readable output')
    .action(async (deliveryId: string, flags: { json?: boolean }) => {
      await using opened = await ctx.openBus();
      await opened.bus.ack(deliveryId);
      if (flags.json) writeJson(ctx.stdout, { ok: true, deliveryId });
      else ctx.stdout.write(`acked ${deliveryId}\n`);
    });
  bus
    .command('nack <delivery-id>')
    .description(
      'give a delivery back; retried after --delay (or the backoff), dead-lettered after max attempts',
    )
    .option(
      '--delay <ms>',
      'delay before redelivery (default: exponential backoff)',
      parseNonNegativeInt('--delay'),
    )
    .option('--reason <text>', 'why (kept with a dead letter)')
    .option('--json', 'machine-readable output')
    .action(async (deliveryId: string, flags: { delay?: number; reason?: string; json?: boolean }) => {
      await using opened = await ctx.openBus();
      const outcome = await opened.bus.nack(deliveryId, {
        ...(flags.delay === undefined ? {} : { delayMs: flags.delay }),
        ...(flags.reason === undefined ? {} : { reason: flags.reason }),
      });
      if (flags.json) writeJson(ctx.stdout, { deliveryId, ...outcome });
      else if (outcome.outcome === 'retry')
        ctx.stdout.write(`nacked ${deliveryId}: retry in ${outcome.delayMs} ms\n`);
      else ctx.stdout.write(`nacked ${deliveryId}: dead-lettered (${outcome.deadLetter.reason})\n`);
    });
  bus
    .command('extend <delivery-id>')
    .description('extend the lease of a delivery')
    .option('--lease <ms>', 'new lease length from now', parseNonNegativeInt('--lease'))
    .option('--json', 'machine-readable output')
    .action(async (deliveryId: string, flags: { lease?: number; json?: boolean }) => {
      await using opened = await ctx.openBus();
      const delivery = await opened.bus.extend(
        deliveryId,
        flags.lease === undefined ? {} : { leaseMs: flags.lease },
      );
      if (flags.json) writeJson(ctx.stdout, { deliveryId, leaseUntil: delivery.leaseUntil });
      else ctx.stdout.write(`lease of ${deliveryId} until ${new Date(delivery.leaseUntil).toISOString()}\n`);
    });
}

/** Registers `musubi bus ...`: scripting and debugging access to mailboxes, dead letters and events. */
export function registerBusCommands(program: Command, ctx: CliContext): void {
  const bus = program.command('bus').description('send, receive and inspect messages on the bus');
  registerSend(bus, ctx);
  registerReceive(bus, ctx);
  registerSettle(bus, ctx);
  registerBusInspectCommands(bus, ctx);
}
