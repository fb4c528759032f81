import { z } from 'zod';
import { flatten } from './conversation.js';

/** One callable entry of a plugin. `argsSchema` is a JSON Schema for the arguments. */
export const pluginEntrySchema = z.object({
  id: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/),
  description: z.string().default(''),
  args_schema: z.record(z.string(), z.unknown()).default({ type: 'object' }),
  /** Seconds; default from the channel (30 s). `null` or <= 0 means no timeout. */
  timeout: z.number().nullable().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});
export type PluginEntry = z.infer<typeof pluginEntrySchema>;

/** A plugin's catalogue record. */
export const pluginInfoSchema = z.object({
  id: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/),
  name: z.string().optional(),
  description: z.string().default(''),
  short_description: z.string().optional(),
  /** Regular expressions (case-insensitive) over the latest user text that point at this plugin. */
  keywords: z.array(z.string()).optional(),
  /** Passive plugins are never offered to the selection. */
  passive: z.boolean().optional(),
  entries: z.array(pluginEntrySchema).default([]),
});
export type PluginInfo = z.infer<typeof pluginInfoSchema>;

/** Fields of an entry's schema shown per catalogue line. */
const MAX_SCHEMA_FIELDS = 8;

/** Whether an entry may be chosen by the LLM (`agent_auto`, `agent_exposed`, `llm_exposed`, `agent_hidden`). */
export function isEntryVisible(entry: PluginEntry): boolean {
  const m = entry.metadata ?? {};
  return (
    m['agent_auto'] !== false &&
    m['agent_exposed'] !== false &&
    m['llm_exposed'] !== false &&
    m['agent_hidden'] !== true
  );
}

/** The entries the selection may pick: visible ones; a plugin with none declared has the entry `run`. */
export function visibleEntries(plugin: PluginInfo): PluginEntry[] {
  if (plugin.entries.length === 0) return [{ id: 'run', description: '', args_schema: { type: 'object' } }];
  return plugin.entries.filter(isEntryVisible);
}

/** Plugins offered to the selection: not passive, with at least one visible entry. */
export function visiblePlugins(plugins: readonly PluginInfo[]): PluginInfo[] {
  return plugins.filter((p) => p.passive !== true && visibleEntries(p).length > 0);
}

function argsText(schema: Record<string, unknown>): string {
  const props = schema['properties'];
  const fields =
    typeof props === 'object' && props !== null
      ? Object.entries(props)
          .slice(0, MAX_SCHEMA_FIELDS)
          .map(([name, def]) => {
            const type = typeof def === 'object' && def !== null && 'type' in def ? String(def.type) : 'any';
            return `${name}:${type}`;
          })
      : [];
  const required = Array.isArray(schema['required']) ? schema['required'].map(String) : [];
  return `args(${[...fields, ...(required.length > 0 ? [`required=[${required.join(', ')}]`] : [])].join(', ')})`;
}

/** One catalogue line: `- <id>: <description> | entries: [<entry>: <desc> args(...); ...]`. */
export function catalogueLine(plugin: PluginInfo, options: { readonly keywordMatch?: boolean } = {}): string {
  const entries = visibleEntries(plugin)
    .map((e) => `${e.id}: ${flatten(e.description)} ${argsText(e.args_schema)}`)
    .join('; ');
  const mark = options.keywordMatch === true ? ' [KEYWORD MATCH]' : '';
  const description = flatten(plugin.short_description ?? plugin.description);
  return `- ${plugin.id}${mark}: ${description} | entries: [${entries}]`;
}

/** True when one of the plugin's keyword patterns matches `text` (a bad pattern matches literally). */
export function matchesKeyword(plugin: PluginInfo, text: string): boolean {
  return (plugin.keywords ?? []).some((k) => {
    try {
      return new RegExp(k, 'i').test(text);
    } catch {
      // Not a valid regular expression: treat the keyword as plain text.
      return text.toLowerCase().includes(k.toLowerCase());
    }
  });
}

/** Rough token count for the catalogue budget: CJK characters count one each, other text four chars a token. */
export function estimateTokens(text: string): number {
  const cjk = text.match(/[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af]/g)?.length ?? 0;
  return cjk + Math.ceil((text.length - cjk) / 4);
}
