import type { JsonValue } from '../../core/python/json-loads.js';
import { isTruthy, pyStr, pyTypeName } from '../../core/python/repr.js';
import { valueOr, type CommandContext, type CommandHandler } from './command-context.js';
import { mailboxAddress, type MailboxAddress } from './mailbox-address.js';
import { MAX_ITEM_BYTES, renderItem, type MailItem } from './mail-item.js';
import { WireErrors, errorReply, okReply, unhashableReply } from './replies.js';

function joinedAddresses(ctx: CommandContext, except?: JsonValue): MailboxAddress[] {
  return ctx.team.state.agents.filter((a) => a.name !== except).map((a) => ctx.addressOf(a.name).address);
}

/**
 * Renders, size-checks and delivers one item sent now; resolves the error reply when it is too large.
 * Takes the fields one by one rather than an item to add `tsMs` to: one object less per message.
 */
async function deliverItem(
  ctx: CommandContext,
  targets: readonly MailboxAddress[],
  from: JsonValue,
  type: JsonValue,
  text: JsonValue,
): Promise<string | null> {
  const item: MailItem = { from, type, text, tsMs: ctx.clock.now() };
  const rendered = renderItem(item);
  if (rendered.bytes > MAX_ITEM_BYTES) return errorReply(WireErrors.messageTooLarge);
  await ctx.deliver(targets, item, rendered);
  return null;
}

/** send: one message to a configured agent (joined or not). */
export const send: CommandHandler = async (request, ctx) => {
  const to = request.get('to');
  if (typeof to !== 'string' || !ctx.team.members.includes(to)) {
    return errorReply(`Unknown target: ${to === undefined ? '' : pyStr(to)}`);
  }
  const failure = await deliverItem(
    ctx,
    ctx.addressOf(to).targets,
    valueOr(request, 'agent', 'user'),
    valueOr(request, 'msg_type', 'message'),
    valueOr(request, 'text', ''),
  );
  return failure ?? okReply();
};

/** broadcast: to every joined agent except the sender. */
export const broadcast: CommandHandler = async (request, ctx) => {
  const sender = valueOr(request, 'agent', 'user');
  const failure = await deliverItem(
    ctx,
    joinedAddresses(ctx, sender),
    sender,
    'broadcast',
    valueOr(request, 'text', ''),
  );
  return failure ?? okReply();
};

/**
 * say: a human's message to one name (any name, unvalidated) or, without a truthy `to`, to every
 * joined agent. Reproduces the original's quirk: a scalar non-string `text` is delivered and then
 * answered with Python's "not subscriptable" error.
 */
export const say: CommandHandler = async (request, ctx) => {
  const to = valueOr(request, 'to', '');
  let targets: MailboxAddress[];
  if (isTruthy(to)) {
    const address = mailboxAddress(to);
    if ('unhashable' in address) return unhashableReply(address.unhashable);
    targets = [address];
  } else targets = joinedAddresses(ctx);
  const text = valueOr(request, 'text', '');
  const failure = await deliverItem(ctx, targets, 'user', 'say', text);
  if (failure !== null) return failure;
  const type = pyTypeName(text);
  if (type === 'dict') return errorReply("unhashable type: 'slice'");
  if (type !== 'str' && type !== 'list') return errorReply(`'${type}' object is not subscriptable`);
  return okReply();
};

/** peek: how many messages wait for `agent`, without consuming or creating anything. */
export const peek: CommandHandler = async (request, ctx) => {
  const agent = valueOr(request, 'agent', '');
  const address = typeof agent === 'string' ? ctx.addressOf(agent).address : mailboxAddress(agent);
  if ('unhashable' in address) return unhashableReply(address.unhashable);
  const pending = await ctx.mailboxes.pending(address);
  ctx.touch(agent);
  const { phase, round, implementer } = ctx.team.state;
  return okReply({ pending, phase, round, implementer });
};
