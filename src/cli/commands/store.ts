import type { Command } from 'commander';
import type { CliContext } from '../cli-context.js';
import { writeJson } from '../output.js';

interface BackupView {
  readonly path: string;
  readonly takenAt: number;
}

function backupLine(backup: BackupView | null): string {
  return backup === null
    ? 'backup: none yet (one is taken when the store is next opened with data in it)\n'
    : `backup: ${backup.path} from ${new Date(backup.takenAt).toISOString()}\n`;
}

function sizeOf(bytes: number | null): string {
  if (bytes === null) return 'missing';
  return bytes < 1_048_576 ? `${Math.ceil(bytes / 1024)} KiB` : `${(bytes / 1_048_576).toFixed(1)} MiB`;
}

function registerCheck(store: Command, ctx: CliContext): void {
  store
    .command('check')
    .description('run PRAGMA integrity_check on the SQLite store file; exits 0 when sound, 1 when damaged')
    .option('--json', 'machine-readable output')
    .action(async (flags: { json?: boolean }) => {
      const config = await ctx.loadConfig();
      const { checkStore } = await import('../../hub/store-repair.js');
      const result = await checkStore({ url: config.store, cwd: process.cwd() });
      const isSound = result.damage === null;
      if (flags.json) {
        const { path, bytes, problems, backup } = result;
        writeJson(ctx.stdout, { path, isSound, bytes, problems, backup });
      } else {
        ctx.stdout.write(
          `${result.path}: ${isSound ? 'sound' : 'damaged'} (PRAGMA integrity_check, ${sizeOf(result.bytes)})\n`,
        );
        for (const problem of result.problems) ctx.stdout.write(`  ${problem}\n`);
        ctx.stdout.write(backupLine(result.backup));
      }
      if (result.damage !== null) throw result.damage;
    });
}

function registerRestore(store: Command, ctx: CliContext): void {
  store
    .command('restore')
    .description(
      'bring back the backup of the SQLite store file; the damaged files are moved aside, not deleted',
    )
    .option(
      '--force',
      'restore even though musubi cannot tell whether another process has an unreadable file open',
    )
    .option('--json', 'machine-readable output')
    .action(async (flags: { force?: boolean; json?: boolean }) => {
      const config = await ctx.loadConfig();
      const { restoreStore } = await import('../../hub/store-repair.js');
      const result = await restoreStore({
        url: config.store,
        cwd: process.cwd(),
        now: Date.now(),
        ...(flags.force === true && { force: true }),
      });
      if (flags.json) {
        writeJson(ctx.stdout, result);
        return;
      }
      for (const moved of result.movedAside) ctx.stdout.write(`moved ${moved.from} aside to ${moved.to}\n`);
      ctx.stdout.write(
        `restored ${result.path} from its backup ${result.backup.path} (taken ${new Date(result.backup.takenAt).toISOString()})\n`,
      );
    });
}

/** Registers `musubi store check|restore` for the SQLite store file (docs/store.md). */
export function registerStoreCommands(program: Command, ctx: CliContext): void {
  const store = program
    .command('store')
    .description('check the SQLite store file, or bring back its backup (see docs/store.md)');
  registerCheck(store, ctx);
  registerRestore(store, ctx);
}
