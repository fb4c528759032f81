import { lstat } from 'node:fs/promises';
import { createSystemClock } from '../../core/clock.js';
import { TIMED_OUT_TEXT } from '../../gateways/yadon/os-error-text.js';
import { sendPetMessage } from '../../gateways/yadon/yadon-client.js';
import { petSocketPath, resolveSocketDir } from '../../gateways/yadon/yadon-paths.js';
import type { CliContext } from '../cli-context.js';
import { redLine, RESET, YELLOW } from './yadon-output.js';

/** Deadline of a pet send (spec yadon.md 2.5). */
const PET_SEND_MS = 5_000;

/** A bubble to send with `say` / `_say`. */
export interface SayRequest {
  readonly number: number;
  readonly message: string;
  readonly type: string;
  readonly durationMs: number;
}

/**
 * `yadon say <number> <message>`: sends a bubble to pet `<number>` and reports it; exit 0, or 1 with the
 * yellow 警告 (no pet socket) or red タイムアウト / エラー line.
 */
export async function sayCommand(ctx: CliContext, request: SayRequest): Promise<number> {
  const path = petSocketPath(resolveSocketDir(ctx.env), String(request.number));
  if ((await lstat(path).catch(() => null)) === null) {
    ctx.stdout.write(
      `${YELLOW}警告${RESET}: ペットソケットが見つかりません (${path})\nペットが起動していないか、番号が間違っている可能性があります\n`,
    );
    return 1;
  }
  ctx.stdout.write(`吹き出し送信中 (ヤドン${request.number}へ)...`);
  const error = await sendPetMessage(
    path,
    { text: request.message, type: request.type, duration: request.durationMs },
    { timeoutMs: PET_SEND_MS, clock: createSystemClock() },
  );
  if (error === null) {
    ctx.stdout.write(' OK\n');
    return 0;
  }
  ctx.stdout.write(
    error === TIMED_OUT_TEXT
      ? `\n${redLine('タイムアウト', 'ペットからの応答がありません')}`
      : `\n${redLine('エラー', error)}`,
  );
  return 1;
}

/** `yadon _say`: like `say`, but prints nothing and ignores every error (exit 0). */
export async function quietSayCommand(ctx: CliContext, request: SayRequest): Promise<void> {
  const path = petSocketPath(resolveSocketDir(ctx.env), String(request.number));
  await sendPetMessage(
    path,
    { text: request.message, type: request.type, duration: request.durationMs },
    { timeoutMs: PET_SEND_MS, clock: createSystemClock() },
  );
}
