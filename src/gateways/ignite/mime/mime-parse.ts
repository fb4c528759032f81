import { pySplitLines, pyStrip } from '../../../core/python/text.js';
import { toLf } from './header-text.js';

/** A message split at its first blank line: the header block and the body (spec/ignite.md 2.4). */
export interface MimeParts {
  readonly headerBlock: string;
  readonly body: string;
  /** False when the text has no blank line (then the body is empty). */
  readonly hasSeparator: boolean;
}

/** Converts CRLF/CR to LF and splits at the first `\n\n`. */
export function splitMime(text: string): MimeParts {
  const lf = toLf(text);
  const at = lf.indexOf('\n\n');
  if (at === -1) return { headerBlock: lf, body: '', hasSeparator: false };
  return { headerBlock: lf.slice(0, at), body: lf.slice(at + 2), hasSeparator: true };
}

/**
 * Parses a header block: lines split at every Python `splitlines()` boundary; a line starting with space
 * or tab continues the last header (one space plus the stripped line) when that header's name is not
 * empty; otherwise a line with `:` starts a header (name and value stripped); other lines are ignored.
 * Names are case-sensitive; a repeated name keeps its FIRST position and its LAST value (Map semantics).
 */
export function parseHeaderBlock(headerBlock: string): Map<string, string> {
  const headers = new Map<string, string>();
  // The original tests its current name for truth (`startswith((" ", "\t")) and current_key`, starting
  // from ""), so before any header and after one named "" (`: x`, which `--extra ===` writes) an indented
  // line is read as a line of its own: ` From: evil` there sets From.
  let last = '';
  for (const line of pySplitLines(headerBlock)) {
    const first = line.charAt(0);
    if ((first === ' ' || first === '\t') && last !== '') {
      headers.set(last, `${headers.get(last) ?? ''} ${pyStrip(line)}`);
      continue;
    }
    const colon = line.indexOf(':');
    if (colon === -1) continue;
    last = pyStrip(line.slice(0, colon));
    headers.set(last, pyStrip(line.slice(colon + 1)));
  }
  return headers;
}

/** A parsed message: headers in first-appearance order and the body. */
export interface ParsedMime {
  readonly headers: ReadonlyMap<string, string>;
  readonly body: string;
}

/** Splits and parses a whole message text (2.4). */
export function parseMime(text: string): ParsedMime {
  const parts = splitMime(text);
  return { headers: parseHeaderBlock(parts.headerBlock), body: parts.body };
}

/** `To`/`Cc` values: split on `,`, items stripped, empty items dropped. */
export function addressList(value: string | undefined): string[] {
  if (value === undefined) return [];
  return value
    .split(',')
    .map((item) => pyStrip(item))
    .filter((v) => v !== '');
}

/** One key of the `parse` output; arrays are the `to` and `cc` lists. */
export type ParseEntry = readonly [key: string, value: string | readonly string[]];

const FIXED: ReadonlyArray<readonly [key: string, header: string]> = [
  ['message_id', 'Message-ID'],
  ['from', 'From'],
  ['to', 'To'],
  ['cc', 'Cc'],
  ['date', 'Date'],
  ['in_reply_to', 'In-Reply-To'],
  ['type', 'X-IGNITE-Type'],
  ['priority', 'X-IGNITE-Priority'],
  ['thread_id', 'X-IGNITE-Thread-ID'],
  ['repository', 'X-IGNITE-Repository'],
  ['issue', 'X-IGNITE-Issue'],
  ['status', 'X-IGNITE-Status'],
  ['content_type', 'Content-Type'],
];
const FIXED_KEYS = new Set([...FIXED.map(([k]) => k), 'body']);
const PARSED_SUFFIXES = new Set(['Type', 'Priority', 'Thread-ID', 'Repository', 'Issue', 'Status']);
const EXTRA_PREFIX = 'X-IGNITE-';

/**
 * The `parse` result in its contractual key order (3.1): the fourteen fixed keys, then each other
 * `X-IGNITE-*` header as a snake_case key in first-appearance order, never overriding a fixed key.
 */
export function parseEntries(message: ParsedMime): ParseEntry[] {
  const h = message.headers;
  const entries: ParseEntry[] = FIXED.map(([key, header]): ParseEntry => {
    if (key === 'to' || key === 'cc') return [key, addressList(h.get(header))];
    if (key === 'priority') return [key, h.get(header) ?? 'normal'];
    return [key, h.get(header) ?? ''];
  });
  entries.push(['body', message.body]);
  // Two header names can map to one key (`X-IGNITE-A-B`, `X-IGNITE-a_b`): first position, last value.
  const extras = new Map<string, string>();
  for (const [name, value] of h) {
    if (!name.startsWith(EXTRA_PREFIX)) continue;
    const suffix = name.slice(EXTRA_PREFIX.length);
    if (PARSED_SUFFIXES.has(suffix)) continue;
    const key = suffix.toLowerCase().replaceAll('-', '_');
    if (!FIXED_KEYS.has(key)) extras.set(key, value);
  }
  for (const [key, value] of extras) entries.push([key, value]);
  return entries;
}

/**
 * Renders entries like Python `json.dumps(obj, indent=2, ensure_ascii=False)` plus a final newline.
 * Keys are written in the given order (a plain object would move integer-like keys to the front).
 */
export function renderParseJson(entries: readonly ParseEntry[]): string {
  if (entries.length === 0) return '{}\n';
  const items = entries.map(([key, value]) => {
    const rendered =
      typeof value === 'string'
        ? JSON.stringify(value)
        : value.length === 0
          ? '[]'
          : `[\n${value.map((v) => `    ${JSON.stringify(v)}`).join(',\n')}\n  ]`;
    return `  ${JSON.stringify(key)}: ${rendered}`;
  });
  return `{\n${items.join(',\n')}\n}\n`;
}
