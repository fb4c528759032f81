import { readFile, unlink } from 'node:fs/promises';
import type { Logger } from '../../core/logger.js';
import { isSendableType } from './agent-names.js';
import { createFileExclusive } from './mime/atomic-file.js';
import { hasLineBreak } from './mime/header-text.js';
import { buildMime } from './mime/mime-build.js';
import { addressList } from './mime/mime-parse.js';
import { parseTimestamp } from './mime/mime-time.js';
import { canonicalName, CANONICAL_NAME_PATTERN } from './mime/queue-file-name.js';
import { decodeUtf8Strict } from './mime/strict-utf8.js';
import { moveNoReplace, readMessageFile } from './queue-file-io.js';

/** Time and identity for files the monitor writes. */
export interface IntakeContext {
  readonly logger: Logger;
  readonly pid: number;
  /** Epoch milliseconds with a sub-millisecond fraction. */
  now(): number;
}

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
    ctx.logger.warn({ file: name, err }, 'legacy YAML message unreadable; left in place');
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
    ctx.logger.warn(
      { file: name },
      'legacy YAML message has control characters in a header field; left in place',
    );
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
  if (!(await createFileExclusive(`${root}/${target}`, content))) {
    target = canonicalName(
      isSendableType(values.type) ? values.type : 'unknown',
      BigInt(Math.floor(ctx.now() * 1000)),
    );
    if (!(await createFileExclusive(`${root}/${target}`, content))) return null;
  }
  await unlink(`${root}/${name}`).catch(() => undefined);
  ctx.logger.info({ file: name, converted: target }, 'legacy YAML message converted to MIME');
  return target;
}

/**
 * Renames a non-canonical `.mime` to `<type>_<16 digits>.mime` (4.2): type from X-IGNITE-Type (else the
 * old name minus `.mime`), digits from the Date header's epoch seconds plus six zeros (else the current
 * microseconds), incremented while taken. Resolves the name now in use (unchanged when canonical or gone).
 */
export async function normaliseName(root: string, name: string, ctx: IntakeContext): Promise<string> {
  if (CANONICAL_NAME_PATTERN.test(name)) return name;
  let headers: ReadonlyMap<string, string>;
  try {
    headers = (await readMessageFile(`${root}/${name}`)).message.headers;
  } catch {
    // Vanished meanwhile: nothing to rename.
    return name;
  }
  const declared = headers.get('X-IGNITE-Type') ?? '';
  const type =
    declared !== '' && isSendableType(declared) && !hasLineBreak(declared)
      ? declared
      : name.slice(0, -'.mime'.length);
  const dateMs = parseTimestamp(headers.get('Date') ?? '');
  let stamp =
    dateMs === null ? BigInt(Math.floor(ctx.now() * 1000)) : BigInt(Math.floor(dateMs / 1000)) * 1_000_000n;
  for (let tries = 0; tries < 10_000; tries++, stamp += 1n) {
    const target = canonicalName(type, stamp);
    const outcome = await moveNoReplace(`${root}/${name}`, `${root}/${target}`);
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
