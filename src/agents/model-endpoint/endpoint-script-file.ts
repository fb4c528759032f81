import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { MusubiError } from '../../core/errors.js';
import { endpointScriptSchema, type EndpointScript } from './model-behaviour.js';

const MAX_SCRIPT_BYTES = 4 * 1024 * 1024;

function checkPatterns(script: EndpointScript, file: string): void {
  script.rules.forEach((rule, i) => {
    for (const key of ['match', 'system', 'model'] as const) {
      const pattern = rule[key];
      if (pattern === undefined) continue;
      try {
        new RegExp(pattern, 'u');
      } catch (err) {
        throw new MusubiError(
          'CONFIG_INVALID',
          `${file}: rules[${i}].${key} is not a regular expression: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
    }
  });
}

/**
 * Reads a model-endpoint script (YAML or JSON: `rules: [{match, system, model, then}]`, `default`).
 * Throws CONFIG_INVALID naming the file and the path of every problem (unreadable, too large, not YAML,
 * unknown behaviour, a pattern that is not a regular expression).
 */
export async function loadEndpointScript(file: string): Promise<EndpointScript> {
  let text: string;
  try {
    const buf = await readFile(file);
    if (buf.length > MAX_SCRIPT_BYTES) throw new Error(`larger than ${MAX_SCRIPT_BYTES} bytes`);
    text = buf.toString('utf8');
  } catch (err) {
    throw new MusubiError(
      'CONFIG_INVALID',
      `cannot read script ${file}: ${err instanceof Error ? err.message : String(err)}`,
      {
        cause: err,
      },
    );
  }
  let raw: unknown;
  try {
    raw = parse(text) ?? {};
  } catch (err) {
    throw new MusubiError(
      'CONFIG_INVALID',
      `${file}: not YAML or JSON: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const parsed = endpointScriptSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new MusubiError('CONFIG_INVALID', `${file}: ${issues}`);
  }
  checkPatterns(parsed.data, file);
  return parsed.data;
}
