import type { TeamStep, TeamsReply } from './api-schemas.js';
import type { StoredEvent } from '../../core/events.js';
import { lastEventCursor, readRecentEvents } from './event-tail.js';
import { teamViewSchema, type TeamView } from './http-ports.js';
import type { RouteContext } from './route-context.js';

/** A team with its recent timeline. */
export type TeamTimeline = TeamView & { readonly history: readonly TeamStep[] };

const SCAN_POSITIONS = 20_000;
const MAX_EVENTS = 2_000;
const HISTORY_PER_TEAM = 30;

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value.length > 0 && value.length <= 256 ? value : undefined;
const whole = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;

/** What one `team.*` event says about its team: id, new phase and round, pattern when named. */
function readTeamEvent(e: StoredEvent): { team: string; step?: TeamStep; pattern?: string } | undefined {
  if (!('data' in e) || !e.type.startsWith('team.')) return undefined;
  const team = text(e.data.team) ?? text(e.data.teamId);
  if (team === undefined) return undefined;
  const phase = text(e.data.to) ?? text(e.data.phase);
  const round = whole(e.data.round);
  const pattern = text(e.data.pattern);
  return {
    team,
    ...(phase === undefined ? {} : { step: { phase, at: e.at, ...(round === undefined ? {} : { round }) } }),
    ...(pattern === undefined ? {} : { pattern }),
  };
}

/**
 * `GET /api/teams` → `{ teams: TeamTimeline[] }`: every team the team sources report, plus teams seen
 * only in recent `team.*` events (e.g. `team.phase_changed` `{ team, from, to, round }`), each with its
 * recent phase steps. A team known only from events takes its phase and round from the newest step.
 */
export function registerTeamRoutes(ctx: RouteContext): void {
  ctx.app.get('/api/teams', async (): Promise<TeamsReply> => {
    const reported = (await Promise.all(ctx.teams.map((s) => s.list()))).flat();
    const teams = new Map<string, TeamView>();
    for (const view of reported) {
      const parsed = teamViewSchema.safeParse(view);
      if (parsed.success) teams.set(parsed.data.id, parsed.data);
      else ctx.logger.warn({ issues: parsed.error.issues.length }, 'team view left out: not a TeamView');
    }
    const tail = await lastEventCursor(ctx.bus);
    const events = await readRecentEvents(ctx.bus, {
      tail,
      match: (e) => e.type.startsWith('team.'),
      limit: MAX_EVENTS,
      scanLimit: SCAN_POSITIONS,
    });
    const history = new Map<string, TeamStep[]>();
    const patterns = new Map<string, string>();
    for (const seen of events.map(readTeamEvent)) {
      if (seen === undefined) continue;
      const steps = history.get(seen.team) ?? [];
      if (seen.step !== undefined) steps.push(seen.step);
      history.set(seen.team, steps);
      if (seen.pattern !== undefined) patterns.set(seen.team, seen.pattern);
    }
    for (const [team, steps] of history) {
      if (teams.has(team)) continue;
      const last = steps.at(-1);
      teams.set(team, {
        id: team,
        pattern: patterns.get(team) ?? 'team',
        ...(last === undefined ? {} : { phase: last.phase, updatedAt: last.at }),
        ...(last?.round === undefined ? {} : { round: last.round }),
      });
    }
    const timelines: TeamTimeline[] = [...teams.values()].map((t) => ({
      ...t,
      history: (history.get(t.id) ?? []).slice(-HISTORY_PER_TEAM),
    }));
    return { teams: timelines.sort((a, b) => a.id.localeCompare(b.id)) };
  });
}
