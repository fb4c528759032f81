import type { JsonValue } from '../../core/python/json-loads.js';
import { isTruthy, pyStr, pyTypeName } from '../../core/python/repr.js';
import { valueOr, type CommandContext, type CommandHandler } from './command-context.js';
import { mailboxAddress, type MailboxAddress } from './mailbox-address.js';
import { MAX_ITEM_BYTES, renderItem, type MailItem, type RenderedItem } from './mail-item.js';
import { WireErrors, errorReply, okReply, unhashableReply } from './replies.js';

function joinedAddresses(ctx: CommandContext, except?: JsonValue): MailboxAddress[] {
  return ctx.team.state.agents.filter((a) => a.name !== except).map((a) => ctx.addressOf(a.name).address);
}

/** The item sent now, rendered as a listen reply shows it; null when it is too large to send. */
function renderNow(
  ctx: CommandContext,
  from: JsonValue,
  type: JsonValue,
  text: JsonValue,
): { readonly item: MailItem; readonly rendered: RenderedItem } | null {
  const item: MailItem = { from, type, text, tsMs: ctx.clock.now() };
  const rendered = renderItem(item);
  return rendered.bytes > MAX_ITEM_BYTES ? null : { item, rendered };
}

/** Renders, size-checks and delivers one item; resolves the error reply when it is too large. */
async function deliverItem(
  ctx: CommandContext,
  targets: readonly MailboxAddress[],
  item: Omit<MailItem, 'tsMs'>,
): Promise<string | null> {
  const made = renderNow(ctx, item.from, item.type, item.text);
  if (made === null) return errorReply(WireErrors.messageTooLarge);
  await ctx.deliver(targets, made.item, made.rendered);
  return null;
}

/** send: one message to a configured agent (joined or not). */
export const send: CommandHandler = async (request, ctx) => {
  const to = request.get('to');
  if (typeof to !== 'string' || !ctx.team.members.includes(to)) {
    return errorReply(`Unknown target: ${to === undefined ? '' : pyStr(to)}`);
  }
  const made = renderNow(
    ctx,
    valueOr(request, 'agent', 'user'),
    valueOr(request, 'msg_type', 'message'),
    valueOr(request, 'text', ''),
  );
  if (made === null) return errorReply(WireErrors.messageTooLarge);
  await ctx.deliver(ctx.addressOf(to).targets, made.item, made.rendered);
  return okReply();
};

/** broadcast: to every joined agent except the sender. */
export const broadcast: CommandHandler = async (request, ctx) => {
  const sender = valueOr(request, 'agent', 'user');
  const failure = await deliverItem(ctx, joinedAddresses(ctx, sender), {
    from: sender,
    type: 'broadcast',
    text: valueOr(request, 'text', ''),
  });
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
  const failure = await deliverItem(ctx, targets, { from: 'user', type: 'say', text });
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
