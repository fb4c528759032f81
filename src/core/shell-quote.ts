/** Quotes one word for a POSIX shell: plain words as they are, anything else in single quotes. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

/**
 * Splits `text` into words like a shell would, without any expansion: whitespace separates, '…' is
 * literal, "…" allows \" and \\ escapes, a backslash outside quotes escapes the next character.
 */
export function splitShellWords(
  text: string,
): { readonly ok: true; readonly words: string[] } | { readonly ok: false; readonly problem: string } {
  const words: string[] = [];
  let word = '';
  let hasWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charAt(i);
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end === -1) return { ok: false, problem: 'unterminated single quote' };
      word += text.slice(i + 1, end);
      hasWord = true;
      i = end;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < text.length && text.charAt(j) !== '"'; j++) {
        if (text.charAt(j) === '\\' && (text.charAt(j + 1) === '"' || text.charAt(j + 1) === '\\')) j++;
        word += text.charAt(j);
      }
      if (j >= text.length) return { ok: false, problem: 'unterminated double quote' };
      hasWord = true;
      i = j;
    } else if (c === '\\' && i + 1 < text.length) {
      word += text.charAt(++i);
      hasWord = true;
    } else if (/\s/.test(c)) {
      if (hasWord) words.push(word);
      word = '';
      hasWord = false;
    } else {
      word += c;
      hasWord = true;
    }
  }
  if (hasWord) words.push(word);
  return { ok: true, words };
}
