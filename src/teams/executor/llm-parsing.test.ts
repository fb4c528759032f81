import { describe, expect, it } from 'vitest';
import { bm25Top } from './bm25.js';
import { parseAssessment } from './channel-assessment.js';
import { parseDuplicateAnswer } from './duplicate-check.js';
import { parseLenientJson } from './lenient-json.js';
import { catalogueLine, visiblePlugins } from './plugin-catalogue.js';
import { invalidity, parsePluginAnswer } from './plugin-selection.js';
import { pluginInfoSchema } from './plugin-catalogue.js';

describe('LLM answer parsing', () => {
  it('reads JSON in code fences, with trailing commas, or inside prose', () => {
    expect(parseLenientJson('```json\n{"a": 1,}\n```')).toEqual({ a: 1 });
    expect(parseLenientJson('Sure! {"a": {"b": "}"}} hope that helps')).toEqual({ a: { b: '}' } });
    expect(parseLenientJson('[null, true]', { open: '[' })).toEqual([null, true]);
    expect(parseLenientJson('no json here')).toBeUndefined();
  });

  it('keeps only offered channel ids of an assessment, and fails on a non-object', () => {
    const verdicts = parseAssessment(
      '{"shell": {"can_execute": true, "task_description": "t"}, "evil": {"can_execute": true}}',
      ['shell'],
    );
    expect([...(verdicts ?? new Map())]).toEqual([
      ['shell', { canExecute: true, taskDescription: 't', reason: '' }],
    ]);
    expect(parseAssessment('[1]', ['shell'])).toBeNull();
  });

  it('normalises plugin answers: entry id aliases, integer ids', () => {
    expect(
      parsePluginAnswer(
        '{"has_task": true, "can_execute": true, "plugin_id": 7, "event_id": 3, "plugin_args": []}',
      ),
    ).toEqual({
      hasTask: true,
      canExecute: true,
      pluginId: '7',
      entryId: '3',
      args: {},
      taskDescription: '',
      reason: '',
    });
  });

  it('names what is wrong with a plugin decision', () => {
    const plugins = [
      pluginInfoSchema.parse({
        id: 'notes',
        entries: [{ id: 'add' }, { id: 'secret', metadata: { agent_hidden: true } }],
      }),
      pluginInfoSchema.parse({ id: 'hidden', entries: [{ id: 'x', metadata: { llm_exposed: false } }] }),
    ];
    const base = { hasTask: true, canExecute: true, args: {}, taskDescription: '', reason: '' };
    expect(invalidity({ ...base, pluginId: 'nope', entryId: 'add' }, plugins)).toBe(
      "plugin_id 'nope' not found",
    );
    expect(invalidity({ ...base, pluginId: 'notes', entryId: null }, plugins)).toBe('entry_id missing');
    expect(invalidity({ ...base, pluginId: 'notes', entryId: 'secret' }, plugins)).toBe(
      "entry_id 'secret' not found in plugin 'notes'",
    );
    expect(invalidity({ ...base, pluginId: 'hidden', entryId: 'x' }, plugins)).toBe(
      'no_agent_visible_entries',
    );
    expect(invalidity({ ...base, pluginId: 'notes', entryId: 'add' }, plugins)).toBeUndefined();
    expect(visiblePlugins(plugins).map((p) => p.id)).toEqual(['notes']);
  });

  it('writes catalogue lines with at most eight schema fields', () => {
    const properties = Object.fromEntries(
      Array.from({ length: 10 }, (_, i) => [`f${i}`, { type: 'string' }]),
    );
    const plugin = pluginInfoSchema.parse({
      id: 'notes',
      description: 'keeps\nnotes',
      entries: [
        { id: 'add', description: 'add one', args_schema: { type: 'object', properties, required: ['f0'] } },
      ],
    });
    expect(catalogueLine(plugin, { keywordMatch: true })).toBe(
      '- notes [KEYWORD MATCH]: keeps notes | entries: [add: add one args(f0:string, f1:string, f2:string, f3:string, f4:string, f5:string, f6:string, f7:string, required=[f0])]',
    );
    expect(catalogueLine(pluginInfoSchema.parse({ id: 'bare' }))).toBe('- bare:  | entries: [run:  args()]');
  });

  it('reads both duplicate answer shapes and treats anything else as not a duplicate', () => {
    expect(parseDuplicateAnswer('["t1", true]')).toBe(true);
    expect(parseDuplicateAnswer('{"duplicate": true, "matched_id": "t1"}')).toBe(true);
    expect(parseDuplicateAnswer('[null, false]')).toBe(false);
    expect(parseDuplicateAnswer('I think so')).toBe(false);
  });

  it('ranks documents with BM25, CJK characters as single tokens', () => {
    const docs = ['send an email to a friend', 'weather forecast for tomorrow', '天気予報を調べる'];
    expect(bm25Top(docs, 'what is the weather tomorrow', 10)).toEqual([1]);
    expect(bm25Top(docs, '天気', 10)).toEqual([2]);
    expect(bm25Top(docs, 'nothing matches', 10)).toEqual([]);
  });
});
