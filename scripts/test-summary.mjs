// Prints `N passed, N failed[, N skipped]` from vitest's JSON report, for CI's closing-line reader.
import { readFileSync } from 'node:fs';

const file = process.argv[2] ?? '.tmp/vitest-report.json';
let report;
try {
  report = JSON.parse(readFileSync(file, 'utf8'));
} catch (err) {
  console.error(`test-summary: cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`);
  console.log('0 passed, 1 failed');
  process.exit(1);
}
const passed = Number(report.numPassedTests ?? 0);
const failed =
  Number(report.numFailedTests ?? 0) + (report.success === false && report.numFailedTests === 0 ? 1 : 0);
const skipped = Number(report.numPendingTests ?? 0) + Number(report.numTodoTests ?? 0);
console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
