import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import type { AgentBackend } from '../../agents/agent-runner.js';
import { MusubiError } from '../../core/errors.js';
import type { CliContext } from '../cli-context.js';

/** The agent CLIs `musubi init` looks for, in the order it lists them. */
const CLI_ORDER: readonly AgentBackend[] = ['claude', 'codex', 'gemini', 'copilot', 'opencode'];

/** The commented musubi.yaml for the CLIs found (the scripted agent when none is). */
export function initYaml(found: readonly AgentBackend[]): string {
  const backends = found.length === 0 ? (['scripted'] as const) : found;
  const agents = backends.map((b) => `${b}-1`);
  const lines = [
    '# musubi.yaml — written by `musubi init`. Every key is optional; see docs/agents.md and docs/run.md.',
    '#',
    `# Agent CLIs found on PATH: ${found.length === 0 ? 'none (the built-in scripted agent is used)' : found.join(', ')}.`,
    '',
    'agents:',
  ];
  for (const [i, backend] of backends.entries()) {
    lines.push(`  ${agents[i] ?? ''}:`, `    backend: ${backend}`);
    if (backend === 'claude') {
      lines.push(
        '    # claude runs with --dangerously-skip-permissions by default (bypass): it may edit files and run',
        '    # commands in its worktree without asking. For stricter turns use acceptEdits (edits only) or plan.',
        '    # permissionMode: acceptEdits',
      );
    } else if (backend === 'codex') {
      lines.push(
        '    # codex runs with --dangerously-bypass-approvals-and-sandbox by default; workspace-write keeps it',
        '    # inside the worktree (its bubblewrap sandbox must work on this machine).',
        '    # sandbox: workspace-write',
      );
    } else if (backend === 'gemini') {
      lines.push('    # gemini runs with --yolo by default (approves every tool call).');
    } else if (backend === 'copilot') {
      lines.push('    # copilot runs with --allow-all-tools by default.');
    } else if (backend === 'opencode') {
      lines.push('    # opencode runs with --auto by default.');
    }
    lines.push('    # model: <the CLI’s model name; its own default when absent>');
  }
  lines.push(
    '',
    'teams:',
    '  # `musubi run --team main "<goal>"`: the first agent plans, the workers take turns in their own worktrees.',
    '  main:',
    '    pattern: three-phase',
    `    agents: [${agents.join(', ')}]`,
    '    # budget:',
    '    #   maxCostUsd: 5        # refuse turns once the team has spent this much (kept in the store)',
    '    #   maxTokens: 2000000',
    '',
    '# Concurrent turns per backend (default 4), so a big team does not trip rate limits.',
    '# agentConcurrency:',
    ...backends.filter((b) => b !== 'scripted').map((b) => `#   ${b}: 2`),
    '',
  );
  return lines.join('\n');
}

/** The MCP server entry for Claude Code's `.mcp.json` (project scope). */
function claudeMcp(agent: string): Record<string, unknown> {
  return { command: 'musubi', args: ['mcp', '--agent', agent] };
}

const CODEX_MCP_HEADER = '[mcp_servers.musubi]';

function codexMcp(agent: string): string {
  return [
    CODEX_MCP_HEADER,
    'command = "musubi"',
    `args = ["mcp", "--agent", "${agent}"]`,
    '# receive waits at most 50 s; keep the tool timeout above that.',
    'tool_timeout_sec = 60',
    '',
  ].join('\n');
}

/** agent_sync's hooks for Claude Code (docs/agent-sync.md), as `.claude/settings.json` entries. */
function claudeHooks(
  agent: string,
): Record<string, { matcher?: string; hooks: { type: string; command: string }[] }[]> {
  const hook = (kind: string, name = true) => ({
    type: 'command',
    command: `${name ? `AGENT_SYNC_NAME=${agent} ` : ''}musubi agent-sync hook ${kind} --format claude`,
  });
  return {
    Stop: [{ hooks: [hook('block-stop')] }],
    PostToolUse: [{ matcher: '*', hooks: [hook('check-messages')] }],
    PreToolUse: [{ matcher: 'AskUserQuestion', hooks: [hook('block-questions', false)] }],
  };
}

async function readJson(path: string): Promise<Record<string, unknown>> {
  if (!existsSync(path)) return {};
  const text = await readFile(path, 'utf8');
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value))
      return value as Record<string, unknown>;
  } catch {
    // Reported below: a file we cannot read as an object is never rewritten.
  }
  throw new MusubiError(
    'CONFIG_INVALID',
    `${path} is not a JSON object; leaving it as it is (add the lines above by hand)`,
  );
}

function objectAt(parent: Record<string, unknown>, key: string): Record<string, unknown> {
  const value = parent[key];
  if (typeof value === 'object' && value !== null && !Array.isArray(value))
    return value as Record<string, unknown>;
  const fresh: Record<string, unknown> = {};
  parent[key] = fresh;
  return fresh;
}

/** Adds the musubi MCP server and agent_sync hooks to the project's Claude Code files; what it changed. */
async function writeClaude(dir: string, agent: string): Promise<string[]> {
  const changed: string[] = [];
  const mcpPath = join(dir, '.mcp.json');
  const mcp = await readJson(mcpPath);
  const servers = objectAt(mcp, 'mcpServers');
  if (!Object.hasOwn(servers, 'musubi')) {
    servers['musubi'] = claudeMcp(agent);
    await writeFile(mcpPath, `${JSON.stringify(mcp, null, 2)}\n`);
    changed.push('.mcp.json');
  }
  const settingsPath = join(dir, '.claude', 'settings.json');
  const settings = await readJson(settingsPath);
  const hooks = objectAt(settings, 'hooks');
  let isChanged = false;
  for (const [event, entries] of Object.entries(claudeHooks(agent))) {
    const list = Array.isArray(hooks[event]) ? (hooks[event] as unknown[]) : [];
    const text = JSON.stringify(list);
    for (const entry of entries) {
      if (
        text.includes(
          `musubi agent-sync hook ${entry.hooks[0]?.command.split(' hook ')[1]?.split(' ')[0] ?? ''}`,
        )
      )
        continue;
      list.push(entry);
      isChanged = true;
    }
    hooks[event] = list;
  }
  if (isChanged) {
    await mkdir(dirname(settingsPath), { recursive: true });
    await writeFile(settingsPath, `${JSON.stringify(settings, null, 2)}\n`);
    changed.push('.claude/settings.json');
  }
  return changed;
}

/** Appends the musubi MCP server to the project's `.codex/config.toml` unless it has one. */
async function writeCodex(dir: string, agent: string): Promise<string[]> {
  const path = join(dir, '.codex', 'config.toml');
  const text = existsSync(path) ? await readFile(path, 'utf8') : '';
  if (text.includes(CODEX_MCP_HEADER)) return [];
  await mkdir(dirname(path), { recursive: true });
  await writeFile(
    path,
    `${text}${text === '' || text.endsWith('\n') ? '' : '\n'}${text === '' ? '' : '\n'}${codexMcp(agent)}`,
  );
  return ['.codex/config.toml'];
}

async function init(
  ctx: CliContext,
  flags: { dir?: string; force?: boolean; write?: boolean },
): Promise<void> {
  const dir = resolve(flags.dir ?? process.cwd());
  const { installedBackends } = await import('../../agents/selection/installed-backends.js');
  const installed = await installedBackends(ctx.env);
  const found = CLI_ORDER.filter((b) => installed.has(b));
  const yamlPath = join(dir, 'musubi.yaml');
  if (existsSync(yamlPath) && flags.force !== true) {
    ctx.stdout.write(`musubi.yaml exists in ${dir}; leaving it (--force writes a new one)\n`);
  } else {
    await writeFile(yamlPath, initYaml(found));
    ctx.stdout.write(
      `wrote ${yamlPath} for ${found.length === 0 ? 'the scripted agent (no agent CLI on PATH)' : found.join(', ')}\n`,
    );
  }
  const claude = 'claude-1';
  const codex = 'codex-1';
  const lines = [
    '',
    'Claude Code — .mcp.json (the musubi bus as MCP tools):',
    JSON.stringify({ mcpServers: { musubi: claudeMcp(claude) } }, null, 2),
    '',
    'Claude Code — .claude/settings.json (agent_sync hooks: listen before stopping, mail after tools):',
    JSON.stringify({ hooks: claudeHooks(claude) }, null, 2),
    '',
    'Codex — .codex/config.toml:',
    codexMcp(codex),
  ];
  if (flags.write !== true) {
    ctx.stdout.write(`${lines.join('\n')}\n(musubi init --write adds them to these files)\n`);
  } else {
    const changed = [...(await writeClaude(dir, claude)), ...(await writeCodex(dir, codex))];
    ctx.stdout.write(
      changed.length === 0
        ? 'the MCP and hook lines were already there\n'
        : `added the MCP and hook lines to ${changed.join(', ')}\n`,
    );
  }
  ctx.stdout.write('next: musubi run "<goal>" (in a git repository; see docs/run.md)\n');
}

/** Registers `musubi init`: a commented musubi.yaml for the agent CLIs on PATH, and the MCP and hook lines. */
export function registerInitCommand(program: Command, ctx: CliContext): void {
  program
    .command('init')
    .description(
      'write a commented musubi.yaml for the agent CLIs on PATH and print the MCP and hook lines for Claude Code and Codex',
    )
    .option('--dir <dir>', 'where (default: the current directory)')
    .option('--force', 'overwrite an existing musubi.yaml')
    .option(
      '--write',
      'also add the MCP and hook lines to .mcp.json, .claude/settings.json and .codex/config.toml',
    )
    .action((flags: { dir?: string; force?: boolean; write?: boolean }) => init(ctx, flags));
}
