import type { ApiClient } from './api-client.js';
import type { PageState } from './page-state.js';
import {
  agentsReply,
  deadLettersReply,
  inboxReply,
  leasesReply,
  mailboxesReply,
  messagesReply,
  runsReply,
  tasksReply,
  teamsReply,
  turnsReply,
} from '../gateways/http/api-schemas.js';

/** The snapshots the page loads, each from its routes. */
/** Messages the log starts with (the list is virtualised; it keeps up to ~10,000). */
const FIRST_LOAD_MESSAGES = 2000;

export type Topic = 'agents' | 'queues' | 'tasks' | 'teams' | 'messages' | 'turns' | 'runs' | 'inbox';
/** Every topic, in the order a full refresh loads them. */
export const TOPICS: readonly Topic[] = [
  'agents',
  'queues',
  'tasks',
  'teams',
  'messages',
  'turns',
  'runs',
  'inbox',
];

/** The parts of the page a render may redraw. */
export type Section =
  'agents' | 'queues' | 'tasks' | 'teams' | 'log' | 'header' | 'timeline' | 'runs' | 'inbox' | 'drawer';

/** Turns loaded at start and on reconnect (live events add the rest). */
const TURNS_LOADED = 1_000;

/**
 * Fetches one snapshot into `state` and resolves the sections it changed. Rejects with the API
 * client's ApiError (the caller's refresh scheduler reports it and tries again later).
 */
export async function loadSnapshot(
  api: ApiClient,
  state: PageState,
  topic: Topic,
): Promise<readonly Section[]> {
  const s = state;
  switch (topic) {
    case 'agents':
      s.agents = await api.get('/api/agents', agentsReply);
      return ['agents', 'header', 'timeline', 'drawer'];
    case 'queues': {
      const [boxes, leases, dead] = await Promise.all([
        api.get('/api/mailboxes', mailboxesReply),
        api.get('/api/leases', leasesReply),
        api.get('/api/dead-letters', deadLettersReply),
      ]);
      [s.mailboxes, s.leases, s.deadLetters] = [boxes.mailboxes, leases.leases, dead.deadLetters];
      return ['queues', 'agents', 'header'];
    }
    case 'tasks':
      s.tasks = await api.get('/api/tasks', tasksReply);
      return ['tasks', 'header'];
    case 'teams':
      s.teams = (await api.get('/api/teams', teamsReply)).teams;
      return ['teams', 'timeline'];
    case 'turns': {
      const reply = await api.get(`/api/turns?limit=${TURNS_LOADED}`, turnsReply);
      return s.turns.merge(reply.turns) ? ['timeline', 'drawer'] : [];
    }
    case 'runs':
      s.runs = await api.get('/api/runs', runsReply);
      return ['runs', 'drawer'];
    case 'inbox':
      s.inbox = await api.get('/api/inbox', inboxReply);
      return ['inbox'];
    case 'messages': {
      // The first load brings the newest 2,000 messages; later ones only what came since.
      const after =
        s.log.coveredCursor === 0 ? `?limit=${FIRST_LOAD_MESSAGES}` : `?after=${s.log.coveredCursor}`;
      const reply = await api.get(`/api/messages${after}`, messagesReply);
      s.log.merge(reply.messages);
      s.log.coveredCursor = Math.max(s.log.coveredCursor, reply.cursor);
      return ['log'];
    }
  }
}
