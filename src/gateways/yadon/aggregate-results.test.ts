import { describe, expect, it } from 'vitest';
import { aggregateResults } from './aggregate-results.js';
import { phaseBubbleText, shortenForBubble } from './bubble-text.js';
import { EMPTY_SUMMARY, summarize } from './result-doc.js';

const ok = (from: string, summary: string, output = summary) => ({
  type: 'result',
  id: 'x',
  from,
  status: 'success',
  payload: { output, summary },
});

describe('aggregation', () => {
  it('joins summary lines and output blocks in the given order', () => {
    const doc = aggregateResults('job', [
      ok('yadon-1', '実装しました'),
      ok('yadon-1', 'README更新'),
      {
        type: 'result',
        id: 'x',
        from: 'yadon-1',
        status: 'error',
        payload: { output: '送信失敗: timed out', summary: 'ヤドン1への送信に失敗' },
      },
    ]);
    expect(doc).toEqual({
      type: 'result',
      id: 'job',
      from: 'yadoran',
      status: 'partial_error',
      payload: {
        summary:
          '[yadon-1] success: 実装しました\n[yadon-1] success: README更新\n[yadon-1] error: ヤドン1への送信に失敗',
        output:
          '=== yadon-1 (success) ===\n実装しました\n\n=== yadon-1 (success) ===\nREADME更新\n\n=== yadon-1 (error) ===\n送信失敗: timed out',
      },
    });
    expect(Object.keys(doc)).toEqual(['type', 'id', 'from', 'status', 'payload']);
  });

  it('collects a worker error reply unchanged: unknown status, empty texts, partial_error', () => {
    const doc = aggregateResults('j', [{ type: 'error', from: 'yadon-2', message: '接続処理エラー: x' }]);
    expect(doc.status).toBe('partial_error');
    expect(doc.payload).toEqual({ summary: '[yadon-2] unknown: ', output: '=== yadon-2 (unknown) ===\n' });
  });

  it('reports partial_error when everything failed and success with no entries', () => {
    const failed = { ...ok('yadon-1', 'x'), status: 'error' };
    expect(aggregateResults('j', [failed, failed]).status).toBe('partial_error');
    expect(aggregateResults('j', [])).toMatchObject({
      status: 'success',
      payload: { summary: '', output: '' },
    });
  });

  it('summarises a worker output as its first 200 stripped code points, or (出力なし)', () => {
    expect(summarize(`  ${'あ'.repeat(250)}  `)).toBe('あ'.repeat(200));
    expect(summarize(' \n\u3000')).toBe(EMPTY_SUMMARY);
  });

  it('shortens bubble text: paths to their last component, then max code points plus ...', () => {
    expect(shortenForBubble('/home/u/proj/src/a.py を修正', 80)).toBe('a.py を修正');
    expect(shortenForBubble('/Users/太郎/プロジェクト/設計.md', 80)).toBe('設計.md');
    expect(shortenForBubble('あいうえお', 3)).toBe('あいう...');
    expect(shortenForBubble('あいう', 3)).toBe('あいう');
  });

  it('labels phase bubbles', () => {
    expect(phaseBubbleText('implement', 2)).toBe('実装するヤドン2体に依頼');
    expect(phaseBubbleText('docs', 1)).toBe('ドキュメント更新するヤドン1体に依頼');
    expect(phaseBubbleText('review', 0)).toBe('レビューするヤドン0体に依頼');
    expect(phaseBubbleText('test', 3)).toBe('...test...ヤドン3体に依頼');
  });
});
