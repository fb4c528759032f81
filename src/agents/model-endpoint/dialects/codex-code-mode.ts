import { z } from 'zod';
import type { ModelAction, OfferedTool } from '../conversation.js';

/*
 * codex 0.171's "code mode" (its gpt-5.6-* and gpt-6* models, the default gpt-6.2-sol): the request has no
 * `tools`; an `additional_tools` input item offers one free-form tool `exec` that runs JavaScript, in which
 * the classic tools are functions of a global `tools` object (`await tools.apply_patch(patch)`,
 * `await tools.exec_command({cmd})`). The endpoint offers those nested tools to the planner as if they
 * were plain tools, and wraps the planned call into an `exec` script.
 */

const nestedTool: z.ZodType<NestedTool> = z.lazy(() =>
  z.looseObject({
    type: z.string(),
    name: z.string().optional(),
    description: z.string().optional(),
    tools: z.array(nestedTool).optional(),
  }),
);

interface NestedTool {
  readonly type: string;
  readonly name?: string | undefined;
  readonly description?: string | undefined;
  readonly tools?: readonly NestedTool[] | undefined;
}

const additionalTools = z.looseObject({ type: z.literal('additional_tools'), tools: z.array(nestedTool) });

/** The nested tool's arguments as code mode declares them (the parts a scripted step fills in). */
const EXEC_COMMAND_SCHEMA = {
  type: 'object',
  properties: { cmd: { type: 'string' }, workdir: { type: 'string' } },
  required: ['cmd'],
};

function findExec(tools: readonly NestedTool[]): NestedTool | undefined {
  for (const t of tools) {
    if (t.type === 'custom' && t.name === 'exec') return t;
    const inner = t.tools === undefined ? undefined : findExec(t.tools);
    if (inner !== undefined) return inner;
  }
  return undefined;
}

/**
 * The tools a code-mode request offers inside its `exec` tool (`apply_patch`, `exec_command`), or
 * undefined when the request is not in code mode.
 */
export function codeModeTools(input: readonly unknown[]): OfferedTool[] | undefined {
  for (const item of input) {
    const parsed = additionalTools.safeParse(item);
    if (!parsed.success) continue;
    const description = findExec(parsed.data.tools)?.description;
    if (description === undefined) continue;
    const offered: OfferedTool[] = [];
    if (description.includes('apply_patch(input: string)'))
      offered.push({ name: 'apply_patch', kind: 'custom' });
    if (description.includes('exec_command(args')) {
      offered.push({ name: 'exec_command', kind: 'function', schema: EXEC_COMMAND_SCHEMA });
    }
    return offered;
  }
  return undefined;
}

/** The `exec` script that makes a planned tool call in code mode and hands its result back as text. */
export function codeModeScript(action: Extract<ModelAction, { kind: 'tool' }>): string {
  if (!/^[A-Za-z_$][\w$]*$/.test(action.name)) throw new Error(`not a code-mode tool name: ${action.name}`);
  const argument =
    action.freeform !== undefined ? JSON.stringify(action.freeform) : JSON.stringify(action.input);
  return `text(await tools.${action.name}(${argument}));\n`;
}
