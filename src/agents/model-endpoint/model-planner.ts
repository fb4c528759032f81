import { createHash, randomUUID } from 'node:crypto';
import { isAbsolute, join } from 'node:path';
import { structuredNekoReply } from '../scripted/assessment-reply.js';
import { decompositionReply, isDecompositionRequest } from '../scripted/decomposition-reply.js';
import { parseScript, type ScriptInstruction } from '../scripted/script-parser.js';
import type { ConversationView, ModelAction, PlannedResponse } from './conversation.js';
import { lastUserText } from './conversation.js';
import { hasRequiredFields, minimalJson } from './minimal-json.js';
import { behaviourFor, type EndpointScript, type ModelBehaviour } from './model-behaviour.js';
import { chooseShellCall, chooseWriteCall, type ChosenCall } from './tool-choice.js';

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

function writeStep(view: ConversationView, path: string, content: string): ModelAction {
  const cwd = cwdOf(view);
  const absolute = isAbsolute(path) || cwd === undefined ? path : join(cwd, path);
  const call = chooseWriteCall(view.tools, { path, absolute, content });
  return toolAction(call, `musubi model endpoint: the CLI offered no tool that writes ${path}`);
}

function runStep(view: ConversationView, argv: readonly string[]): ModelAction {
  const call = chooseShellCall(view.tools, argv, cwdOf(view));
  return toolAction(call, `musubi model endpoint: the CLI offered no shell tool to run ${argv.join(' ')}`);
}

function scriptedSteps(view: ConversationView, instructions: readonly ScriptInstruction[]): ModelAction {
  const steps = instructions.filter(
    (i) => i.op === 'write' || i.op === 'append' || i.op === 'run' || i.op === 'mkdir',
  );
  const step = steps[view.toolResultsSinceUser];
  if (step === undefined) {
    const replies = instructions.flatMap((i) => (i.op === 'reply' || i.op === 'fail' ? [i.text] : []));
    return text(replies.length > 0 ? replies.join('\n') : DEFAULT_REPLY);
  }
  switch (step.op) {
    case 'write':
      return writeStep(view, step.path, step.content);
    case 'append':
      return runStep(view, ['sh', '-c', 'printf %s "$1" >> "$2"', 'sh', step.content, step.path]);
    case 'mkdir':
      return runStep(view, ['mkdir', '-p', step.path]);
    case 'run':
      return runStep(view, step.argv);
    default:
      return text(DEFAULT_REPLY);
  }
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
      return plain(s.view.toolResultsSinceUser === 0 ? writeStep(s.view, b.path, b.content) : text(b.then));
    case 'run':
      return plain(s.view.toolResultsSinceUser === 0 ? runStep(s.view, b.command) : text(b.then));
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
