import { createFileExclusiveSync } from './atomic-file-sync.js';
import { queueFileCandidates, type NewQueueFile } from './queue-file-name.js';

/** The synchronous twin of `writeNewQueueFile` for the send tool (node:fs only). Returns the path written. */
export function writeNewQueueFileSync(file: NewQueueFile): string {
  const names = queueFileCandidates(file);
  for (;;) {
    const { value } = names.next();
    if (typeof value === 'string' && createFileExclusiveSync(value, file.content)) return value;
  }
}
