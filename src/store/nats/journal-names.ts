/**
 * Every JetStream name one NATS store uses, derived from its prefix: the journal stream (message
 * records and events) and the KV bucket. Two stores with the same prefix share one bus.
 */
export interface JournalNames {
  readonly prefix: string;
  /** The journal stream: every message change and every event, cursor = stream sequence. */
  readonly stream: string;
  /** Wildcard covering every message record. */
  readonly messageSubjects: string;
  /** Subject of events appended by higher layers (escalations, tasks, agents). */
  readonly eventSubject: string;
  /** KV bucket of the key-value state (its stream is `KV_<bucket>`). */
  readonly kvBucket: string;
}

/** Names for `prefix` (already validated as `[A-Za-z0-9_-]{1,64}`). */
export function journalNames(prefix: string): JournalNames {
  return {
    prefix,
    stream: `${prefix}_journal`,
    messageSubjects: `${prefix}.msg.>`,
    eventSubject: `${prefix}.event`,
    kvBucket: `${prefix}_kv`,
  };
}

// Mailbox names and envelope ids use [A-Za-z0-9._-]; '.' separates subject tokens, so it becomes '~'
// (outside that alphabet, so the mapping stays one-to-one and every token stays non-empty).
function token(name: string): string {
  return name.replaceAll('.', '~');
}

/** The subject holding every record of one message: `<prefix>.msg.<mailbox>.<envelope id>`. */
export function messageSubject(names: JournalNames, mailbox: string, envelopeId: string): string {
  return `${names.prefix}.msg.${token(mailbox)}.${token(envelopeId)}`;
}

/** Subjects of one envelope id in every mailbox (for requeueing its dead letters). */
export function envelopeSubjects(names: JournalNames, envelopeId: string): string {
  return `${names.prefix}.msg.*.${token(envelopeId)}`;
}

/** The mailbox and envelope id a message subject stands for, or null for any other subject. */
export function parseMessageSubject(
  names: JournalNames,
  subject: string,
): { readonly mailbox: string; readonly envelopeId: string } | null {
  const head = `${names.prefix}.msg.`;
  if (!subject.startsWith(head)) return null;
  const [mailbox, envelopeId, ...rest] = subject.slice(head.length).split('.');
  if (mailbox === undefined || envelopeId === undefined || rest.length > 0) return null;
  return { mailbox: mailbox.replaceAll('~', '.'), envelopeId: envelopeId.replaceAll('~', '.') };
}
