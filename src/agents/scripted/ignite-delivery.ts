import { readdir, readFile, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { MusubiError } from '../../core/errors.js';
import type { AgentRunInput } from '../agent-runner.js';
import { orgTurn, bodyField } from './ignite-org-rules.js';
import { resolveInsideCwd } from './safe-path.js';
import { parseScript, splitWords, type ScriptInstruction } from './script-parser.js';

/** IGNITE's delivery prompt (spec/ignite.md 3.4). */
const DELIVERY_PROMPT = /^新しいメッセージが来ました。(.+) を読んで処理してください。$/;
/** The line of a role's instructions naming the send tool, e.g. `send tool: musubi ignite send`. */
const SEND_TOOL_LINE = /^\s*send tool:\s*(.+)$/im;
const DEFAULT_SEND_TOOL = ['musubi', 'ignite', 'send'];

/** An IGNITE turn planned by fixed rules: the instructions to run, then `finish` deletes the message. */
export interface IgniteTurnPlan {
  readonly script: ScriptInstruction[];
  finish(): Promise<void>;
}

function headerOf(text: string, name: string): string {
  const head = text.replace(/\r\n?/g, '\n').split('\n\n')[0] ?? '';
  return new RegExp(`^${name}:(.*)$`, 'm').exec(head)?.[1]?.trim() ?? '';
}

/**
 * Plans the scripted agent's turn for IGNITE's delivery prompt, or resolves undefined for any other
 * prompt. The agent reads the named MIME file (it must lie inside cwd), reacts by the fixed org rules
 * (`ignite-org-rules.ts`): a worker runs the task description as instructions, then every reply is sent
 * with the send tool named by a `send tool: <argv>` line of the system prompt (default `musubi ignite
 * send`); `finish()` deletes the message file, as IGNITE agents do when done.
 */
export async function planIgniteTurn(input: AgentRunInput): Promise<IgniteTurnPlan | undefined> {
  const file = DELIVERY_PROMPT.exec(input.prompt.trim())?.[1];
  if (file === undefined) return undefined;
  const path = await resolveInsideCwd(input.cwd, file);
  const text = await readFile(path, 'utf8').catch((err: unknown) => {
    throw new MusubiError('AGENT_FAILED', `scripted agent: cannot read the IGNITE message ${file}`, {
      cause: err,
    });
  });
  const body = text.replace(/\r\n?/g, '\n').split('\n\n').slice(1).join('\n\n');
  const queueDir = dirname(dirname(dirname(path)));
  const self = headerOf(text, 'To').split(',')[0]?.trim() || (dirname(dirname(path)).split('/').at(-1) ?? '');
  const workers = (await readdir(queueDir).catch(() => [])).filter((n) => /^ignitian[-_]\d+$/.test(n)).length;
  const turn = orgTurn(
    {
      type: headerOf(text, 'X-IGNITE-Type'),
      from: headerOf(text, 'From'),
      self,
      field: (k) => bodyField(body, k),
    },
    workers,
  );
  const toolLine = SEND_TOOL_LINE.exec(input.systemPrompt ?? '')?.[1];
  const tool = toolLine === undefined ? DEFAULT_SEND_TOOL : splitWords(toolLine, 0);
  const sends: ScriptInstruction[] = turn.replies.map((r) => ({
    op: 'run',
    argv: [...tool, r.type, self, r.to, '--body', r.body],
    line: 0,
  }));
  return {
    script: [...parseScript(turn.work), ...sends],
    finish: () => unlink(path).catch(() => undefined),
  };
}
