// How a message to the human is named in the inbox: its kind and a one-line title, from the message type
// and the body as each protocol writes it (a yadon result document, an IGNITE YAML report, plain text).

const TITLE_CHARS = 160;

function parsedObject(body: string): Record<string, unknown> | undefined {
  if (!body.trimStart().startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(body);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > TITLE_CHARS ? `${line.slice(0, TITLE_CHARS - 1)}…` : line;
}

/** `result`, `escalation`, `report`, `question`, `reply` or `message`: what a person is being told. */
export function inboxKind(type: string, body: string): string {
  const doc = parsedObject(body);
  const docType = typeof doc?.['type'] === 'string' ? doc['type'] : undefined;
  for (const kind of ['result', 'escalation', 'report', 'question', 'reply'] as const) {
    if (type === kind || type.endsWith(`.${kind}`) || type.endsWith(`_${kind}`) || docType === kind)
      return kind;
  }
  if (/^\s*type:\s*report\b/m.test(body)) return 'report';
  return type === 'say' ? 'reply' : 'message';
}

/**
 * The first thing worth reading: a JSON document's `summary`, `title`, `message` or `result` text; a YAML
 * report's `title:` or `summary:` line; else the first non-empty line of the body.
 */
export function inboxTitle(body: string): string {
  const doc = parsedObject(body);
  // A yadon result keeps its summary in `payload`.
  const payload = doc?.['payload'];
  const docs = [
    doc,
    typeof payload === 'object' && payload !== null ? (payload as Record<string, unknown>) : undefined,
  ];
  for (const d of docs) {
    if (d === undefined) continue;
    for (const field of ['summary', 'title', 'message', 'result', 'text', 'output']) {
      const value = d[field];
      if (typeof value === 'string' && value.trim() !== '') return oneLine(value);
    }
  }
  const yaml = /^\s*(?:title|summary|subject):\s*(.+)$/m.exec(body);
  if (yaml?.[1] !== undefined) return oneLine(yaml[1].replace(/^["']|["']$/g, ''));
  const first = body.split('\n').find((l) => l.trim() !== '') ?? '';
  return oneLine(first);
}
