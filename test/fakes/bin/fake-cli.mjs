// Shared logic of the fake agent CLIs in this folder (claude, codex, gemini, copilot, opencode).
// Each fake accepts its real CLI's flags, reads the prompt the same way, prints the real output shape,
// and misbehaves on request through FAKE_AGENT_* environment variables:
//   FAKE_AGENT_TEXT            reply text (default: "echo: <first prompt line>")
//   FAKE_AGENT_RECORD          file to write {name, argv, cwd, prompt, stdin, env} to (JSON)
//   FAKE_AGENT_PID_FILE        file to append "<role> <pid>\n" lines to (main, grandchild)
//   FAKE_AGENT_DELAY_MS        wait before answering
//   FAKE_AGENT_HANG=1          print a first progress line, then never exit
//   FAKE_AGENT_IGNORE_SIGTERM=1  the main process ignores SIGTERM
//   FAKE_AGENT_GRANDCHILD=ignore|inherit  spawn a grandchild that ignores SIGTERM (stdio ignored or inherited)
//   FAKE_AGENT_CRASH=1         throw an uncaught error after reading the prompt
//   FAKE_AGENT_EXIT_CODE=<n>   exit with n (after normal output)
//   FAKE_AGENT_IS_ERROR=1      report an error the CLI's own way (claude is_error, gemini error object…)
//   FAKE_AGENT_MALFORMED_JSON=1  print broken JSON instead of the real shape
//   FAKE_AGENT_HUGE_OUTPUT_BYTES=<n>  print n bytes of filler lines before the real output
//   FAKE_AGENT_STDERR=<text>   write text to stderr
//   FAKE_AGENT_COST_USD        reported cost (default 0.0123)
//   FAKE_AGENT_DELETE_FILE=1   delete the absolute *.mime path named in the prompt (an IGNITE agent done with its message)
//   FAKE_AGENT_LOG=<file>      append one JSON line {pid, prompt} per invocation
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { appendFileSync, rmSync, writeFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';

const env = process.env;

/** Parses argv against a flag table; calls onUnknown(flag) and stops at the first unknown flag. */
export function parseFlags(argv, table, onUnknown) {
  const byName = new Map();
  for (const spec of table) for (const name of spec.names) byName.set(name, spec);
  const flags = {};
  const positionals = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      positionals.push(arg);
      continue;
    }
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const name = eq === -1 ? arg : arg.slice(0, eq);
    const spec = byName.get(name);
    if (spec === undefined) return onUnknown(name);
    const inline = eq === -1 ? undefined : arg.slice(eq + 1);
    if (spec.type === 'bool') flags[spec.key] = true;
    else if (spec.type === 'value') {
      const value = inline ?? argv[++i];
      if (value === undefined) return onUnknown(name, 'missing value');
      if (spec.choices && !spec.choices.includes(value))
        return onUnknown(name, 'invalid choice', value, spec);
      flags[spec.key] = value;
    } else if (spec.type === 'optional') {
      const next = argv[i + 1];
      flags[spec.key] = inline ?? (next !== undefined && !next.startsWith('-') ? argv[++i] : true);
    } else if (spec.type === 'variadic') {
      const values = inline === undefined ? [] : [inline];
      while (argv[i + 1] !== undefined && !argv[i + 1].startsWith('-')) values.push(argv[++i]);
      flags[spec.key] = values;
    }
  }
  return { flags, positionals };
}

/** Reads all of stdin (empty when stdin is a TTY or closed at once). */
export async function readStdin() {
  if (process.stdin.isTTY) return '';
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/** Writes text to stdout, waiting for drain (backpressure) so huge output is not buffered in memory. */
export async function out(text) {
  if (!process.stdout.write(text)) await new Promise((resolve) => process.stdout.once('drain', resolve));
}

export function fail(message, code) {
  process.stderr.write(message.endsWith('\n') ? message : `${message}\n`);
  process.exit(code);
}

export const isError = env.FAKE_AGENT_IS_ERROR === '1';
export const isMalformed = env.FAKE_AGENT_MALFORMED_JSON === '1';
export const costUsd = Number(env.FAKE_AGENT_COST_USD ?? '0.0123');

export function replyText(prompt) {
  return env.FAKE_AGENT_TEXT ?? `echo: ${prompt.trim().split('\n')[0] ?? ''}`;
}

export function newSessionId(prefix = '') {
  return prefix + randomUUID();
}

/**
 * Everything before the answer: record the call, spawn a grandchild, ignore SIGTERM, delay, hang,
 * crash, flood. `firstLine` is printed before hanging so tests can wait for the process to be running.
 */
export async function prelude({ name, argv, prompt, stdin, firstLine }) {
  if (env.FAKE_AGENT_RECORD) {
    const record = { name, argv, cwd: process.cwd(), prompt, stdin, env: { ...env } };
    writeFileSync(env.FAKE_AGENT_RECORD, JSON.stringify(record));
  }
  if (env.FAKE_AGENT_PID_FILE) appendFileSync(env.FAKE_AGENT_PID_FILE, `main ${process.pid}\n`);
  if (env.FAKE_AGENT_LOG) appendFileSync(env.FAKE_AGENT_LOG, `${JSON.stringify({ pid: process.pid, prompt })}\n`);
  if (env.FAKE_AGENT_IGNORE_SIGTERM === '1') process.on('SIGTERM', () => undefined);
  if (env.FAKE_AGENT_GRANDCHILD) {
    const child = spawn(
      process.execPath,
      ['-e', "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000);"],
      { stdio: env.FAKE_AGENT_GRANDCHILD === 'inherit' ? 'inherit' : 'ignore' },
    );
    child.unref();
    if (env.FAKE_AGENT_PID_FILE) appendFileSync(env.FAKE_AGENT_PID_FILE, `grandchild ${child.pid}\n`);
  }
  if (env.FAKE_AGENT_STDERR) process.stderr.write(`${env.FAKE_AGENT_STDERR}\n`);
  if (env.FAKE_AGENT_DELAY_MS) await delay(Number(env.FAKE_AGENT_DELAY_MS));
  if (env.FAKE_AGENT_HANG === '1') {
    if (firstLine !== undefined) await out(`${firstLine}\n`);
    setInterval(() => undefined, 1000);
    await new Promise(() => undefined);
  }
  if (env.FAKE_AGENT_CRASH === '1') throw new Error(`${name} crashed on purpose`);
  const named = /(\/\S+\.mime)/.exec(prompt)?.[1];
  if (env.FAKE_AGENT_DELETE_FILE === '1' && named !== undefined) rmSync(named, { force: true });
  const huge = Number(env.FAKE_AGENT_HUGE_OUTPUT_BYTES ?? '0');
  if (huge > 0) {
    const line = `${'x'.repeat(1023)}\n`;
    for (let sent = 0; sent < huge; sent += line.length) await out(line);
  }
}

/** Sets the exit code from FAKE_AGENT_EXIT_CODE (or `fallback`) and lets stdout flush. */
export function finish(fallback = 0) {
  process.exitCode = env.FAKE_AGENT_EXIT_CODE === undefined ? fallback : Number(env.FAKE_AGENT_EXIT_CODE);
}
