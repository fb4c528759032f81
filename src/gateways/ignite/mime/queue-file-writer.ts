import { createFileExclusive } from './atomic-file.js';
import { queueFileCandidates, type NewQueueFile } from './queue-file-name.js';

/**
 * Writes `content` atomically as `<dir>/<type>_<usec>.mime`, never replacing an existing file (the stamp
 * is incremented until a name is free). Resolves the path written.
 */
export async function writeNewQueueFile(file: NewQueueFile): Promise<string> {
  const names = queueFileCandidates(file);
  for (;;) {
    const { value } = names.next();
    if (typeof value === 'string' && (await createFileExclusive(value, file.content))) return value;
  }
}
