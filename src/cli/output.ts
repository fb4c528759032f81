import type { Envelope } from '../core/envelope.js';

/** Writes one value as a JSON line. */
export function writeJson(out: NodeJS.WritableStream, value: unknown): void {
  out.write(`${JSON.stringify(value)}\n`);
}

/** A human-readable envelope: header lines, a blank line, then the body. */
export function formatEnvelope(envelope: Envelope): string {
  const lines = [
    `id: ${envelope.id}`,
    `from: ${envelope.from}`,
    `to: ${envelope.to}`,
    `type: ${envelope.type}`,
    `priority: ${envelope.priority}`,
    `attempt: ${envelope.attempt}`,
    `created: ${new Date(envelope.createdAt).toISOString()}`,
  ];
  if (envelope.thread !== undefined) lines.push(`thread: ${envelope.thread}`);
  for (const [key, value] of Object.entries(envelope.headers)) lines.push(`header ${key}: ${value}`);
  return `${lines.join('\n')}\n\n${envelope.body}${envelope.body.endsWith('\n') || envelope.body === '' ? '' : '\n'}`;
}
