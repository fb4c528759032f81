import { readFile, unlink } from 'node:fs/promises';
import type { Logger } from '../../core/logger.js';
import { isSendableType } from './agent-names.js';
import { createFileExclusive } from './mime/atomic-file.js';
import { hasLineBreak } from './mime/header-text.js';
import { buildMime } from './mime/mime-build.js';
import { addressList } from './mime/mime-parse.js';
import { parseTimestamp } from './mime/mime-time.js';
import { canonicalName, CANONICAL_NAME_PATTERN, NAME_MAX_BYTES } from './mime/queue-file-name.js';
import { decodeUtf8Strict } from './mime/strict-utf8.js';
import { isDeliverableName } from './ignite-paths.js';
import { moveNoReplace, readMessageFile, type MoveOutcome } from './queue-file-io.js';

/** Time and identity for files the monitor writes. */
export interface IntakeContext {
  readonly logger: Logger;
  readonly pid: number;
  /** Epoch milliseconds with a sub-millisecond fraction. */
  now(): number;
  /** Logs a problem that leaves `file` in place; the monitor logs it once per file, not every rescan. */
  warn(file: string, fields: Record<string, unknown>, msg: string): void;
}

/** The largest time a canonical name holds: 16 digits (spec 2.2). */
const MAX_STAMP = 10n ** 16n - 1n;
/** The type of a renamed file when neither X-IGNITE-Type nor the old name gives a usable one. */
const FALLBACK_TYPE = 'unknown';

/**
 * True when `<type>_<16 digits>.mime` is a name the monitor can create and deliver: a type the send tool
 * accepts, no control character, and at most NAME_MAX bytes in all (ENAMETOOLONG otherwise).
 */
function isUsableType(type: string): boolean {
  if (type === '' || !isSendableType(type)) return false;
  const name = canonicalName(type, 0n);
  return isDeliverableName(name) && Buffer.byteLength(name, 'utf8') <= NAME_MAX_BYTES;
}

const nowStamp = (ctx: IntakeContext): bigint => BigInt(Math.floor(ctx.now() * 1000));

function firstLine(text: string, pattern: RegExp): string {
  const value = pattern.exec(text)?.[1] ?? '';
  return value.replace(/["']/g, '').trim();
}

/**
 * Converts a legacy `<base>.yaml` in a queue root into `<base>.mime` (spec/ignite.md 4.2): type, from,
 * to and priority from the first top-level lines, repository and issue_number from the first matching
 * lines, the whole YAML as the body. The `.yaml` is deleted only after the `.mime` exists. Resolves the
 * new name, or null when the file vanished or cannot be converted (it is then left alone and logged).
 */
export async function convertLegacyYaml(
  root: string,
  name: string,
  ctx: IntakeContext,
): Promise<string | null> {
  let text: string;
  try {
    text = decodeUtf8Strict(await readFile(`${root}/${name}`));
  } catch (err) {
    ctx.warn(name, { err }, 'legacy YAML message unreadable; left in place');
    return null;
  }
  const field = (key: string): string => firstLine(text, new RegExp(`^${key}:(.*)$`, 'm'));
  const loose = (key: string): string => firstLine(text, new RegExp(`^\\s*${key}:(.*)$`, 'm'));
  const priority = field('priority');
  const values = {
    type: field('type') || 'unknown',
    from: field('from') || 'unknown',
    to: field('to') || 'unknown',
  };
  if (
    [values.type, values.from, values.to, priority, loose('repository'), loose('issue_number')].some(
      hasLineBreak,
    )
  ) {
    ctx.warn(name, {}, 'legacy YAML message has control characters in a header field; left in place');
    return null;
  }
  const content = buildMime(
    {
      ...values,
      to: [values.to],
      body: text.replace(/\r\n?/g, '\n'),
      ...(priority !== '' && priority !== 'normal' ? { priority } : {}),
      ...(loose('repository') !== '' ? { repository: loose('repository') } : {}),
      ...(loose('issue_number') !== '' ? { issue: loose('issue_number') } : {}),
    },
    { nowMs: ctx.now(), pid: ctx.pid },
  );
  const base = name.slice(0, -'.yaml'.length);
  let target = `${base}.mime`;
  try {
    if (!(await createFileExclusive(`${root}/${target}`, content))) {
      target = canonicalName(isUsableType(values.type) ? values.type : FALLBACK_TYPE, nowStamp(ctx));
      if (!(await createFileExclusive(`${root}/${target}`, content))) return null;
    }
  } catch (err) {
    ctx.warn(name, { err, converted: target }, 'legacy YAML message cannot be converted; left in place');
    return null;
  }
  await unlink(`${root}/${name}`).catch(() => undefined);
  ctx.logger.info({ file: name, converted: target }, 'legacy YAML message converted to MIME');
  return target;
}

/**
 * Renames a non-canonical `.mime` to `<type>_<16 digits>.mime` (4.2): type from X-IGNITE-Type (else the
 * old name minus `.mime`; `unknown` when neither fits in NAME_MAX bytes), digits from the Date header's
 * epoch seconds plus six zeros (the current microseconds when Date is missing, unparsable or outside 16
 * digits: before 1970 or after 2286), incremented while taken. The new name is always canonical, so it is
 * never renamed again. Resolves the name now in use (unchanged when canonical or gone), or null when the
 * rename failed: the file is then left where it is and the failure logged.
 */
export async function normaliseName(root: string, name: string, ctx: IntakeContext): Promise<string | null> {
  if (CANONICAL_NAME_PATTERN.test(name)) return name;
  let headers: ReadonlyMap<string, string>;
  try {
    headers = (await readMessageFile(`${root}/${name}`)).message.headers;
  } catch {
    // Vanished meanwhile: nothing to rename.
    return name;
  }
  const type =
    [headers.get('X-IGNITE-Type') ?? '', name.slice(0, -'.mime'.length)].find(isUsableType) ?? FALLBACK_TYPE;
  const dateMs = parseTimestamp(headers.get('Date') ?? '');
  const dated = dateMs === null ? -1n : BigInt(Math.floor(dateMs / 1000)) * 1_000_000n;
  let stamp = dated >= 0n && dated <= MAX_STAMP ? dated : nowStamp(ctx);
  for (let tries = 0; tries < 10_000 && stamp <= MAX_STAMP; tries++, stamp += 1n) {
    const target = canonicalName(type, stamp);
    let outcome: MoveOutcome;
    try {
      outcome = await moveNoReplace(`${root}/${name}`, `${root}/${target}`);
    } catch (err) {
      ctx.warn(
        name,
        { err, renamed: target },
        'cannot rename the queue file to a canonical name; left in place',
      );
      return null;
    }
    if (outcome === 'missing') return name;
    if (outcome === 'taken') continue;
    const from = headers.get('From') || 'unknown';
    const to = addressList(headers.get('To'))[0] ?? 'unknown';
    ctx.logger.info(
      { file: name, renamed: target },
      `ファイル名を正規化: ${name} → ${target} (from: ${from}, to: ${to})`,
    );
    return target;
  }
  return name;
}

/**
 * What discovery does with a stable queue file before mirroring it (4.2): a legacy `.yaml` is converted,
 * a non-canonical name normalised. Resolves the name to mirror, or null when the file stays as it is.
 */
export async function takeInName(root: string, name: string, ctx: IntakeContext): Promise<string | null> {
  const current = name.endsWith('.yaml') ? await convertLegacyYaml(root, name, ctx) : name;
  return current === null || CANONICAL_NAME_PATTERN.test(current)
    ? current
    : normaliseName(root, current, ctx);
}
