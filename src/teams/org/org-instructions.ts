import { ROLE_PROTOCOLS, roleOf } from './org-roles.js';

/** How the agents of one organisation reach their tools. */
export interface InstructionTools {
  /** The send command as agents type it, e.g. `musubi ignite send` or `.ignite/bin/send_message.sh`. */
  readonly send: string;
  /** The message reader, e.g. `musubi ignite mime`. */
  readonly mime: string;
}

/**
 * The instruction text of one agent (its system prompt): who it is, what it receives, what it must send
 * to whom, which tools it calls, and that it deletes each message file when done. Returns undefined for
 * a name outside the organisation. The `send tool:` line is also read by the scripted agent.
 */
export function instructionsFor(agent: string, tools: InstructionTools): string | undefined {
  const role = roleOf(agent);
  if (role === null) return undefined;
  const p = ROLE_PROTOCOLS[role];
  const sends = p.sends.map(([when, type, to]) => `- When ${when}: send \`${type}\` to ${to}.`);
  return [
    `You are ${agent}, the ${role} of an IGNITE organisation run by musubi. Your job: ${p.purpose}.`,
    '',
    'How messages reach you: each message is a MIME file with YAML after the blank line. A turn starts with',
    '"新しいメッセージが来ました。<path> を読んで処理してください。" — read that file, act on it, then delete it.',
    `You receive: ${p.receives.join(', ')}.`,
    '',
    'What you send:',
    ...sends,
    '',
    'Tools:',
    `send tool: ${tools.send}`,
    `- Send: ${tools.send} <type> ${agent} <to> --body-file - (YAML body on stdin; --priority high|critical when urgent).`,
    `- Read: ${tools.mime} parse <file> (JSON) or ${tools.mime} extract-body <file>.`,
    '- Bodies are YAML: quote strings with double quotes, use `key: |` blocks for multi-line text.',
    '- Recipients: leader, strategist, architect, evaluator, coordinator, innovator, ignitian_<n>.',
    "- When you are done with a message, delete its file (rm <path>). Never edit other agents' queues by hand.",
  ].join('\n');
}
