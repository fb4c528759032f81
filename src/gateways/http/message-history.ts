import type { StoredEvent } from '../../core/events.js';

/** One step in a message's life, as its events (and the gaps between them) tell. */
export type HistoryStep =
  | { readonly kind: 'sent'; readonly at: number; readonly mailbox: string; readonly from: string }
  | {
      readonly kind: 'claimed';
      readonly at: number;
      readonly mailbox: string;
      /** Who held the lease: the consumer of the mailbox (musubi does not name consumers apart). */
      readonly holder: string;
      readonly attempt: number;
      readonly leaseUntil: number;
    }
  | {
      readonly kind: 'lease_extended';
      readonly at: number;
      readonly mailbox: string;
      readonly leaseUntil: number;
    }
  | {
      readonly kind: 'lease_expired';
      readonly at: number;
      readonly mailbox: string;
      readonly attempt: number;
    }
  | { readonly kind: 'nacked'; readonly at: number; readonly mailbox: string; readonly delayMs: number }
  | { readonly kind: 'dead_lettered'; readonly at: number; readonly mailbox: string; readonly reason: string }
  | { readonly kind: 'escalated'; readonly at: number; readonly mailbox: string; readonly reason: string }
  | { readonly kind: 'requeued'; readonly at: number; readonly mailbox: string }
  | { readonly kind: 'acked'; readonly at: number; readonly mailbox: string }
  | { readonly kind: 'discarded'; readonly at: number; readonly mailbox: string };

interface OpenLease {
  readonly attempt: number;
  leaseUntil: number;
}

/**
 * The history of one message (oldest first) from its events: one step per event, plus a
 * `lease_expired` step wherever a lease ran out (a claim that was neither acked, nacked nor
 * dead-lettered before its lease passed and the message was claimed again, or is still past it now).
 */
export function foldHistory(events: readonly StoredEvent[], now: number): HistoryStep[] {
  const steps: HistoryStep[] = [];
  const open = new Map<string, OpenLease>();
  const expire = (mailbox: string, before: number): void => {
    const lease = open.get(mailbox);
    if (lease === undefined || lease.leaseUntil > before) return;
    steps.push({ kind: 'lease_expired', at: lease.leaseUntil, mailbox, attempt: lease.attempt });
    open.delete(mailbox);
  };
  for (const e of events) {
    if (!('mailbox' in e) || !('messageId' in e)) continue;
    const { mailbox, at } = e;
    switch (e.type) {
      case 'message.sent':
        steps.push({ kind: 'sent', at, mailbox, from: e.from });
        break;
      case 'message.claimed':
        expire(mailbox, at);
        open.set(mailbox, { attempt: e.attempt, leaseUntil: e.leaseUntil });
        steps.push({
          kind: 'claimed',
          at,
          mailbox,
          holder: mailbox,
          attempt: e.attempt,
          leaseUntil: e.leaseUntil,
        });
        break;
      case 'message.lease_extended': {
        const lease = open.get(mailbox);
        if (lease !== undefined) lease.leaseUntil = e.leaseUntil;
        steps.push({ kind: 'lease_extended', at, mailbox, leaseUntil: e.leaseUntil });
        break;
      }
      case 'message.nacked':
        open.delete(mailbox);
        steps.push({ kind: 'nacked', at, mailbox, delayMs: e.delayMs });
        break;
      case 'message.dead_lettered':
        open.delete(mailbox);
        steps.push({ kind: 'dead_lettered', at, mailbox, reason: e.reason });
        break;
      case 'escalation':
        steps.push({ kind: 'escalated', at, mailbox, reason: e.reason });
        break;
      case 'message.requeued':
        steps.push({ kind: 'requeued', at, mailbox });
        break;
      case 'message.acked':
        open.delete(mailbox);
        steps.push({ kind: 'acked', at, mailbox });
        break;
      case 'message.discarded':
        open.delete(mailbox);
        steps.push({ kind: 'discarded', at, mailbox });
        break;
    }
  }
  for (const mailbox of [...open.keys()]) expire(mailbox, now);
  return steps.sort((a, b) => a.at - b.at);
}
