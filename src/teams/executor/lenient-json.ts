function tryParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // Not JSON as it stands: the caller tries the next repair.
    return undefined;
  }
}

function withoutTrailingCommas(text: string): string {
  return text.replace(/,\s*([}\]])/g, '$1');
}

/** The first balanced `{...}` (or `[...]` when `open` is `[`) block of `text`, ignoring brackets in strings. */
function firstBlock(text: string, open: '{' | '['): string | undefined {
  const close = open === '{' ? '}' : ']';
  const start = text.indexOf(open);
  if (start < 0) return undefined;
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === open) depth++;
    else if (c === close && --depth === 0) return text.slice(start, i + 1);
  }
  return undefined;
}

/**
 * Parses JSON the way LLMs write it: strips Markdown code fences and trailing commas, and falls back to
 * the first `{...}` block (or `[...]` with `open: '['`). Resolves undefined when nothing parses. The
 * result is untyped: validate it with a schema.
 */
export function parseLenientJson(text: string, options: { readonly open?: '{' | '[' } = {}): unknown {
  const unfenced = text.replace(/```[a-zA-Z]*\s*/g, '').trim();
  for (const candidate of [unfenced, withoutTrailingCommas(unfenced)]) {
    const value = tryParse(candidate);
    if (value !== undefined) return value;
  }
  const block = firstBlock(unfenced, options.open ?? '{');
  if (block === undefined) return undefined;
  return tryParse(block) ?? tryParse(withoutTrailingCommas(block));
}
