import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** argv prefixes that run the IGNITE send and mime tools from this installation. */
export interface ToolCommands {
  readonly send: readonly string[];
  readonly mime: readonly string[];
}

/**
 * How to run the lean tool entries of this installation: `node dist/ignite-send.cjs` when running from the
 * build, else `node --import tsx src/cli/ignite-send-main.ts` (a source checkout, as in tests).
 */
export function toolCommands(): ToolCommands {
  const built = (name: string): string | undefined => {
    // Bundled: this module is a chunk in dist/, beside the tool entries.
    const path = fileURLToPath(new URL(`./${name}.cjs`, import.meta.url));
    if (existsSync(path)) return path;
    const up = fileURLToPath(new URL(`../${name}.cjs`, import.meta.url));
    return existsSync(up) && up.includes('/dist/') ? up : undefined;
  };
  const source = (file: string): string[] => {
    const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
    return ['--import', tsx, fileURLToPath(new URL(`../${file}`, import.meta.url))];
  };
  const send = built('ignite-send');
  const mime = built('ignite-mime');
  return {
    send: [process.execPath, ...(send === undefined ? source('ignite-send-main.ts') : [send])],
    mime: [process.execPath, ...(mime === undefined ? source('ignite-mime-main.ts') : [mime])],
  };
}
