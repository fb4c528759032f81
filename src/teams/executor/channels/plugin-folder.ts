import { readdir, readFile, realpath } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { z } from 'zod';
import type { ChildReaper } from '../../../agents/process/child-reaper.js';
import { buildChildEnv } from '../../../agents/process/child-env.js';
import { resolveExecutable } from '../../../agents/process/resolve-executable.js';
import { runProcess } from '../../../agents/process/run-process.js';
import { parseLenientJson } from '../lenient-json.js';
import { pluginInfoSchema } from '../plugin-catalogue.js';
import type { LoadedPlugin, PluginHandler, PluginInvocation } from './plugin-channel.js';
import type { PluginHandlerResult } from './plugin-result.js';

/** The manifest file every plugin folder holds. */
export const PLUGIN_MANIFEST = 'plugin.json';
const PLUGIN_DIR_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$/;
const MAX_MANIFEST_BYTES = 256 * 1024;
/** Command handlers are stopped by their signal; this only bounds a handler nobody aborts. */
const COMMAND_CEILING_MS = 24 * 3_600_000;

const httpUrl = z.url().refine((u) => /^https?:\/\//i.test(u), 'must be an http(s) URL');

/** `plugin.json`: the catalogue record plus how to run it. */
export const pluginManifestSchema = pluginInfoSchema.extend({
  handler: z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('command'), argv: z.array(z.string().min(1)).min(1) }),
    z.object({ kind: z.literal('http'), url: httpUrl }),
  ]),
});
export type PluginManifest = z.infer<typeof pluginManifestSchema>;

const handlerResultSchema = z.object({
  success: z.boolean(),
  data: z.unknown().optional(),
  meta: z.unknown().optional(),
  error: z.string().optional(),
});

const progressSchema = z.object({
  type: z.literal('progress'),
  progress: z.number().optional(),
  stage: z.string().optional(),
  message: z.string().optional(),
  step: z.number().optional(),
  step_total: z.number().optional(),
});

/** What the folder loader needs to build command handlers. */
export interface PluginFolderDeps {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly reaper: ChildReaper;
}

function request(call: PluginInvocation): string {
  return JSON.stringify({ task_id: call.taskId, entry_id: call.entryId, args: call.args });
}

function parseResult(text: string): PluginHandlerResult | undefined {
  const parsed = handlerResultSchema.safeParse(parseLenientJson(text));
  return parsed.success ? parsed.data : undefined;
}

/** The executable of a command handler: a PATH name, an absolute path, or a path inside the plugin folder. */
async function commandFile(argv0: string, dir: string, env: PluginFolderDeps['env']): Promise<string | null> {
  if (!argv0.includes('/') || isAbsolute(argv0)) return resolveExecutable(argv0, env['PATH'], dir);
  const inside = relative(dir, resolve(dir, argv0));
  if (inside.startsWith('..') || isAbsolute(inside)) return null; // a relative path may not leave the folder
  return resolveExecutable(resolve(dir, argv0), env['PATH'], dir);
}

function commandHandler(argv: readonly string[], dir: string, deps: PluginFolderDeps): PluginHandler {
  return async (call) => {
    const file = await commandFile(argv[0] ?? '', dir, deps.env);
    if (file === null) return { success: false, error: `plugin command '${argv[0] ?? ''}' not found` };
    const lines: string[] = [];
    const result = await runProcess({
      file,
      displayName: argv[0] ?? 'plugin',
      args: argv.slice(1),
      cwd: dir,
      env: buildChildEnv({ source: deps.env, add: { MUSUBI_TASK_ID: call.taskId } }),
      stdin: request(call),
      timeoutMs: COMMAND_CEILING_MS,
      signal: call.signal,
      reaper: deps.reaper,
      onLine: (stream, line) => {
        if (stream !== 'stdout') return;
        const progress = progressSchema.safeParse(parseLenientJson(line));
        if (!progress.success) return void lines.push(line);
        const { step_total: stepTotal, type: _type, ...rest } = progress.data;
        call.onProgress({ ...rest, ...(stepTotal !== undefined && { stepTotal }) });
      },
    });
    const last = lines.filter((l) => l.trim() !== '').at(-1) ?? '';
    const parsed = parseResult(last);
    if (parsed !== undefined && result.exitCode === 0) return parsed;
    const why = result.stderrTail.trim().split('\n').at(-1) ?? '';
    return (
      parsed ?? {
        success: false,
        error: `plugin exited with ${String(result.exitCode ?? result.signal)}${why ? `: ${why}` : ''}`,
      }
    );
  };
}

function httpHandler(url: string): PluginHandler {
  return async (call) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: request(call),
      signal: call.signal,
    });
    const text = await response.text();
    const parsed = response.ok ? parseResult(text) : undefined;
    return parsed ?? { success: false, error: `plugin endpoint answered ${response.status}` };
  };
}

async function readManifest(dir: string): Promise<PluginManifest | string> {
  const text = await readFile(join(dir, PLUGIN_MANIFEST), 'utf8').catch(() => undefined);
  if (text === undefined) return `no ${PLUGIN_MANIFEST}`;
  if (Buffer.byteLength(text) > MAX_MANIFEST_BYTES) return `${PLUGIN_MANIFEST} is larger than 256 KiB`;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return `${PLUGIN_MANIFEST} is not JSON`;
  }
  const parsed = pluginManifestSchema.safeParse(value);
  if (!parsed.success) return parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
  return parsed.data;
}

/**
 * Loads every plugin of `folder`: one sub-folder per plugin, named like its id, holding `plugin.json`
 * (validated with zod; its `id` must equal the folder name). Paths are built only from names that passed
 * the id pattern; command handlers run in their own folder with argv (no shell) and the allowlisted
 * environment, and a relative command may not leave the folder. Invalid plugins are skipped and listed
 * in `problems`. A missing folder loads nothing.
 */
export async function loadPluginFolder(
  folder: string,
  deps: PluginFolderDeps,
): Promise<{ plugins: LoadedPlugin[]; problems: string[] }> {
  const root = await realpath(folder).catch(() => undefined);
  if (root === undefined) return { plugins: [], problems: [`plugin folder ${folder} not found`] };
  const plugins: LoadedPlugin[] = [];
  const problems: string[] = [];
  const names = (await readdir(root, { withFileTypes: true }))
    .filter((d) => d.isDirectory() && PLUGIN_DIR_NAME.test(d.name))
    .map((d) => d.name)
    .sort();
  for (const name of names) {
    const dir = join(root, name);
    const manifest = await readManifest(dir);
    if (typeof manifest === 'string') {
      problems.push(`${name}: ${manifest}`);
      continue;
    }
    if (manifest.id !== name) {
      problems.push(`${name}: id '${manifest.id}' does not match the folder name`);
      continue;
    }
    const { handler, ...info } = manifest;
    plugins.push({
      info,
      handler:
        handler.kind === 'command' ? commandHandler(handler.argv, dir, deps) : httpHandler(handler.url),
    });
  }
  return { plugins, problems };
}
