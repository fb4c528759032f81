import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { MusubiError } from '../../core/errors.js';
import type { CliContext } from '../cli-context.js';
import { untilStopSignal } from '../stop-signals.js';

interface EndpointFlags {
  readonly port?: string;
  readonly host?: string;
  readonly script?: string;
  readonly wire?: string[];
  readonly configDir?: string;
}

const CLIS = ['claude', 'codex', 'gemini', 'copilot', 'opencode'] as const;
type Cli = (typeof CLIS)[number];

function parsePort(raw: string | undefined): number {
  if (raw === undefined) return 0;
  if (!/^\d+$/.test(raw) || Number(raw) > 65_535) {
    throw new MusubiError('USAGE_INVALID', `--port must be 0..65535, got '${raw}'`);
  }
  return Number(raw);
}

function shellExport(name: string, value: string): string {
  return `export ${name}='${value.replace(/'/g, `'\\''`)}'`;
}

async function printWiring(ctx: CliContext, cli: Cli, url: string, configRoot: string): Promise<void> {
  const { CLI_WIRINGS } = await import('../../agents/model-endpoint/cli-wirings.js');
  const configDir = resolve(configRoot, cli);
  const wiring = CLI_WIRINGS[cli]({ url, configDir });
  for (const file of wiring.files) {
    await mkdir(dirname(file.path), { recursive: true, mode: 0o700 });
    await writeFile(file.path, file.content, { mode: 0o600 });
  }
  ctx.stdout.write(`# ${cli}: ${wiring.files.length} config file(s) written under ${configDir}\n`);
  for (const [name, value] of Object.entries(wiring.env)) ctx.stdout.write(`${shellExport(name, value)}\n`);
  if (wiring.model !== undefined) ctx.stdout.write(`# model: ${wiring.model}\n`);
}

async function serveEndpoint(ctx: CliContext, flags: EndpointFlags): Promise<void> {
  const port = parsePort(flags.port);
  const wires = flags.wire ?? [];
  for (const cli of wires) {
    if (!(CLIS as readonly string[]).includes(cli)) {
      throw new MusubiError('USAGE_INVALID', `--wire takes one of ${CLIS.join(', ')}, got '${cli}'`);
    }
  }
  const [{ createModelEndpoint }, { loadEndpointScript }] = await Promise.all([
    import('../../agents/model-endpoint/create-model-endpoint.js'),
    import('../../agents/model-endpoint/endpoint-script-file.js'),
  ]);
  const script = flags.script === undefined ? undefined : await loadEndpointScript(flags.script);
  const endpoint = createModelEndpoint({
    port,
    ...(flags.host !== undefined && { host: flags.host }),
    ...(script !== undefined && { script }),
    onRequest: (r) =>
      ctx.stderr.write(
        `${r.at} ${r.dialect} ${r.method} ${r.path} ${r.model ?? ''} -> ${r.status} ${r.answer}\n`,
      ),
  });
  const url = await endpoint.start();
  // Listening before saying so: a Ctrl-C right after the line closes the endpoint cleanly.
  const stopped = untilStopSignal();
  ctx.stdout.write(
    `musubi model endpoint on ${url} (Anthropic, OpenAI Responses/Chat, Gemini); Ctrl-C stops it\n`,
  );
  // In a repository the configs go into musubi's one folder there (kept out of `git status`).
  const { musubiFolderOf } = await import('../../hub/musubi-folder.js');
  const configRoot = flags.configDir ?? join(await musubiFolderOf(process.cwd()), 'model-endpoint');
  for (const cli of wires) await printWiring(ctx, cli as Cli, url, configRoot);
  await stopped;
  await endpoint.close();
}

/** Registers `musubi dev model-endpoint`: the local scripted model endpoint for rehearsals with real CLIs. */
export function registerDevCommands(program: Command, ctx: CliContext): void {
  const dev = program
    .command('dev')
    .description('tools for rehearsing teams with real agent CLIs and no model');
  dev
    .command('model-endpoint')
    .description(
      'serve a scripted model on loopback that claude, codex, gemini, copilot and opencode can talk to',
    )
    .option('--port <n>', 'port to listen on (default: 0, any free port)')
    .option('--host <host>', 'loopback address: 127.0.0.1 (default) or ::1')
    .option(
      '--script <file>',
      'YAML/JSON script: rules [{match, system, model, then}] and a default behaviour',
    )
    .option('--wire <cli...>', 'write config for these CLIs and print the environment that points them here')
    .option(
      '--config-dir <dir>',
      'where --wire writes config files (default: .musubi/model-endpoint of the repository, else of the current folder)',
    )
    .action((flags: EndpointFlags) => serveEndpoint(ctx, flags));
}
