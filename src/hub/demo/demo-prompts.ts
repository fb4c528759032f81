import { SAMPLE_TEST_ARGV } from './sample-tests.js';

/** Text squeezed onto one line, so nothing in it can start a line of the scripted agent's language. */
function oneLine(text: string, max = 300): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/**
 * What the lead asks the tester over agent_sync. Prose for a real CLI, and one `run` line the scripted
 * agent executes (docs/agents.md); both end up running the sample's own test suite.
 */
export function testerPrompt(implementerSummary: string): string {
  return [
    'You are the tester of the musubi demo team, attached over agent_sync.',
    `The implementers report: ${oneLine(implementerSummary)}`,
    "Run the project's test suite in the current directory with the command below and answer with its output.",
    `run node ${SAMPLE_TEST_ARGV.join(' ')}`,
  ].join('\n');
}

/**
 * What the lead asks the scribe on the bus: append one entry to CHANGELOG.md naming the files the team
 * added or changed and the tester's verdict. The entry is a here-doc the scripted agent appends as is.
 */
export function scribePrompt(options: {
  readonly changedFiles: readonly string[];
  readonly verdict: string;
}): string {
  const files = options.changedFiles.length === 0 ? 'nothing' : options.changedFiles.join(', ');
  return [
    'You are the scribe of the musubi demo team. Append the entry below to CHANGELOG.md and change nothing else.',
    'append CHANGELOG.md <<EOF',
    '',
    '## Unreleased',
    '',
    `- Changed by the yadon team (yadoran, yadon-1, yadon-2): ${oneLine(files)}.`,
    `- Tested over agent_sync by the tester: ${oneLine(options.verdict)}.`,
    'EOF',
    'reply CHANGELOG.md updated',
  ].join('\n');
}
