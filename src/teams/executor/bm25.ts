const K1 = 1.5;
const B = 0.75;

/** Tokens for BM25: every CJK character alone, plus lower-cased `[a-zA-Z0-9_]+` runs. */
export function bm25Tokens(text: string): string[] {
  return (
    text
      .match(/[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af]|[a-zA-Z0-9_]+/g)
      ?.map((t) => t.toLowerCase()) ?? []
  );
}

/**
 * Ranks `documents` against `query` with Okapi BM25 (k1 1.5, b 0.75) and returns the indexes of the
 * best `limit` documents with a positive score, best first (ties keep document order).
 */
export function bm25Top(documents: readonly string[], query: string, limit: number): number[] {
  const docs = documents.map(bm25Tokens);
  const avgLength = docs.reduce((sum, d) => sum + d.length, 0) / Math.max(1, docs.length);
  const documentFrequency = new Map<string, number>();
  for (const doc of docs)
    for (const term of new Set(doc)) documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1);
  const terms = [...new Set(bm25Tokens(query))];
  const scored = docs.map((doc, index) => {
    const counts = new Map<string, number>();
    for (const t of doc) counts.set(t, (counts.get(t) ?? 0) + 1);
    let score = 0;
    for (const term of terms) {
      const tf = counts.get(term) ?? 0;
      if (tf === 0) continue;
      const df = documentFrequency.get(term) ?? 0;
      const idf = Math.log(1 + (docs.length - df + 0.5) / (df + 0.5));
      score += (idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * doc.length) / Math.max(1, avgLength)));
    }
    return { index, score };
  });
  return scored
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, limit)
    .map((s) => s.index);
}
