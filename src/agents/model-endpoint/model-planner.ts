import { createHash, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { structuredNekoReply } from '../scripted/assessment-reply.js';
import { decompositionReply, isDecompositionRequest } from '../scripted/decomposition-reply.js';
import { parseScript, type ScriptInstruction } from '../scripted/script-parser.js';
import type { ConversationView, MadeToolCall, ModelAction, PlannedResponse } from './conversation.js';
import { lastUserText } from './conversation.js';
import { hasRequiredFields, minimalJson } from './minimal-json.js';
import { behaviourFor, type EndpointScript, type ModelBehaviour } from './model-behaviour.js';
import { chooseReadBeforeWrite, chooseShellCall, chooseWriteCall, type ChosenCall } from './tool-choice.js';

const DEFAULT_REPLY = 'Done.';
/** Where the CLIs name their working directory in the prompts they build. */
const CWD_PATTERNS = [
  /<cwd>\s*([^<\n]+?)\s*<\/cwd>/,
  /Working directory:\s*(\/[^\s`'"]*)/i,
  /current working directory(?: is)?[^/\n]*?(\/[^\s`'"]*)/i,
  /"cwd"\s*:\s*"(\/[^"]+)"/,
];

/** Counts attempts of the same request, so `flaky` and `cut` fail only the first one. */
export class AttemptCounter {
  readonly #seen = new Map<string, number>();

  /** How many times this key was seen before (0 the first time); then counts this one. */
  next(key: string): number {
    const n = this.#seen.get(key) ?? 0;
    this.#seen.set(key, n + 1);
    // Bounded for a long rehearsal: the oldest keys are forgotten first.
    if (this.#seen.size > 10_000) this.#seen.delete(this.#seen.keys().next().value ?? '');
    return n;
  }
}

function cwdOf(view: ConversationView): string | undefined {
  if (view.cwd !== undefined) return view.cwd;
  const texts = [view.systemText, ...view.userTexts];
  for (const pattern of CWD_PATTERNS) {
    for (const t of texts) {
      const m = pattern.exec(t);
      if (m?.[1] !== undefined) return m[1].replace(/[.,;:)]+$/, '');
    }
  }
  return undefined;
}

function text(value: string): ModelAction {
  return { kind: 'text', text: value };
}

function toolAction(call: ChosenCall | undefined, missing: string): ModelAction {
  if (call === undefined) return text(missing);
  return {
    kind: 'tool',
    callId: `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`,
    name: call.name,
    input: call.input,
    ...(call.freeform !== undefined && { freeform: call.freeform }),
  };
}

/** One tool step of a scripted turn. */
type Step =
  | { readonly op: 'write'; readonly path: string; readonly content: string }
  | { readonly op: 'run'; readonly argv: readonly string[] };

function absoluteOf(view: ConversationView, path: string): string | undefined {
  if (isAbsolute(path)) return path;
  const cwd = cwdOf(view);
  return cwd === undefined ? undefined : join(cwd, path);
}

function writeCall(view: ConversationView, path: string, content: string): ChosenCall | undefined {
  return chooseWriteCall(view.tools, { path, absolute: absoluteOf(view, path) ?? path, content });
}

function stepAction(view: ConversationView, step: Step): ModelAction {
  if (step.op === 'run') {
    const call = chooseShellCall(view.tools, step.argv, cwdOf(view));
    return toolAction(
      call,
      `musubi model endpoint: the CLI offered no shell tool to run ${step.argv.join(' ')}`,
    );
  }
  const call = writeCall(view, step.path, step.content);
  return toolAction(call, `musubi model endpoint: the CLI offered no tool that writes ${step.path}`);
}

/** The read a write of an existing file needs first (claude's `Write`), when the CLI has such a rule. */
function readBefore(view: ConversationView, step: Step): ChosenCall | undefined {
  if (step.op !== 'write') return undefined;
  const write = writeCall(view, step.path, step.content);
  return write === undefined ? undefined : chooseReadBeforeWrite(view.tools, write);
}

function isSameCall(made: MadeToolCall | undefined, call: ChosenCall): boolean {
  return made?.name === call.name && isDeepStrictEqual(made.input, call.input);
}

/**
 * The next step of a scripted turn, or undefined when every step is made. A write that must read its file
 * first (see {@link chooseReadBeforeWrite}) is preceded by that read when the file exists, as a real
 * model reads a file before it overwrites it; the endpoint runs beside the CLI and looks at the disk.
 * The steps already made are matched against the turn's tool calls when the dialect reports them, else
 * counted by tool results.
 */
function nextStep(view: ConversationView, steps: readonly Step[]): ModelAction | undefined {
  const made = view.toolCallsSinceUser;
  if (made === undefined) {
    const step = steps[view.toolResultsSinceUser];
    return step === undefined ? undefined : stepAction(view, step);
  }
  let done = 0;
  for (const step of steps) {
    const read = readBefore(view, step);
    if (read !== undefined && done < made.length && isSameCall(made[done], read)) done += 1;
    else if (read !== undefined && done === made.length && step.op === 'write') {
      const absolute = absoluteOf(view, step.path);
      if (absolute !== undefined && existsSync(absolute)) return toolAction(read, '');
    }
    if (done < made.length) {
      done += 1;
      continue;
    }
    return stepAction(view, step);
  }
  return undefined;
}

function scriptedSteps(view: ConversationView, instructions: readonly ScriptInstruction[]): ModelAction {
  const steps = instructions.flatMap((i): Step[] => {
    switch (i.op) {
      case 'write':
        return [{ op: 'write', path: i.path, content: i.content }];
      case 'append':
        return [{ op: 'run', argv: ['sh', '-c', 'printf %s "$1" >> "$2"', 'sh', i.content, i.path] }];
      case 'mkdir':
        return [{ op: 'run', argv: ['mkdir', '-p', i.path] }];
      case 'run':
        return [{ op: 'run', argv: i.argv }];
      default:
        return [];
    }
  });
  const next = nextStep(view, steps);
  if (next !== undefined) return next;
  const replies = instructions.flatMap((i) => (i.op === 'reply' || i.op === 'fail' ? [i.text] : []));
  return text(replies.length > 0 ? replies.join('\n') : DEFAULT_REPLY);
}

function auto(view: ConversationView, prompt: string): ModelAction {
  if (isDecompositionRequest(prompt)) return text(decompositionReply(prompt));
  const neko = structuredNekoReply(prompt);
  if (neko !== undefined) return text(neko);
  let instructions: ScriptInstruction[];
  try {
    instructions = parseScript(prompt);
  } catch (err) {
    return text(`musubi model endpoint: ${err instanceof Error ? err.message : String(err)}`);
  }
  return scriptedSteps(view, instructions);
}

interface PlanState {
  readonly view: ConversationView;
  readonly prompt: string;
  readonly attempt: number;
  readonly isSideRequest: boolean;
}

function resolve(b: ModelBehaviour, s: PlanState): { action: ModelAction; isCut: boolean } {
  const plain = (action: ModelAction) => ({ action, isCut: false });
  // Side requests (no tools: titles, summaries, routing checks) always get a plain answer, so a failure
  // scripted for the agent's turn hits the turn, not the CLI's housekeeping.
  if (s.isSideRequest && b.kind !== 'reply' && b.kind !== 'json' && b.kind !== 'echo') {
    return plain(text(s.view.wantsJson ? '{}' : 'ok'));
  }
  switch (b.kind) {
    case 'reply':
      return plain(text(b.text));
    case 'echo':
      return plain(text(lastUserText(s.view)));
    case 'json':
      return plain(text(JSON.stringify(b.value)));
    case 'write':
      return plain(nextStep(s.view, [{ op: 'write', path: b.path, content: b.content }]) ?? text(b.then));
    case 'run':
      return plain(nextStep(s.view, [{ op: 'run', argv: b.command }]) ?? text(b.then));
    case 'error':
      return plain({ kind: 'error', status: b.status, message: b.message });
    case 'hang':
      return plain({ kind: 'hang' });
    case 'flaky':
      if (s.attempt === 0) {
        return plain({
          kind: 'error',
          status: b.status,
          message: 'Overloaded (musubi model endpoint: flaky)',
        });
      }
      return resolve(b.then, s);
    case 'cut': {
      const next = resolve(b.then, s);
      return { action: next.action, isCut: s.attempt === 0 && s.view.stream };
    }
    case 'auto':
      return plain(auto(s.view, lastUserText(s.view)));
  }
}

/**
 * A side request's text answer that the CLI validates against a schema (gemini's routing, next-speaker
 * and loop checks, retried for over a minute when invalid): the minimal object of the schema unless the
 * planned text already has every required field.
 */
function schemaValid(action: ModelAction, view: ConversationView): ModelAction {
  const schema = view.jsonSchema;
  if (schema === undefined || action.kind !== 'text' || hasRequiredFields(action.text, schema)) return action;
  return text(JSON.stringify(minimalJson(schema)));
}

function tokens(chars: number): number {
  return Math.max(1, Math.ceil(chars / 4));
}

function outputChars(action: ModelAction): number {
  if (action.kind === 'text') return action.text.length;
  if (action.kind === 'tool') return JSON.stringify(action.input).length + (action.freeform?.length ?? 0);
  return 0;
}

/**
 * Plans the answer to one request: the behaviour (directive in the prompt, script rule, default) applied
 * to the step the turn is at (the number of tool results since the user's text). Deterministic but for
 * tool-call ids; `attempts` makes `flaky` and `cut` fail only the first try of the same request.
 */
export function planResponse(
  view: ConversationView,
  script: EndpointScript,
  attempts: AttemptCounter,
): PlannedResponse {
  const prompt = view.userTexts.join('\n');
  const behaviour = behaviourFor(script, { prompt, system: view.systemText, model: view.model });
  const key = createHash('sha256').update(prompt).update(`\0${view.toolResultsSinceUser}`).digest('hex');
  const isSideRequest = view.tools.length === 0;
  const attempt = isSideRequest ? 1 : attempts.next(key);
  const resolved = resolve(behaviour, { view, prompt, attempt, isSideRequest });
  const { isCut } = resolved;
  const action = isSideRequest ? schemaValid(resolved.action, view) : resolved.action;
  return {
    action,
    isCut,
    usage: { inputTokens: tokens(view.inputChars), outputTokens: tokens(outputChars(action)) },
  };
}
