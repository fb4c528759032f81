import { renderAgents, type AgentActions } from './agents-view.js';
import { renderCostCharts } from './cost-charts-view.js';
import { byId } from './dom.js';
import type { Drawer } from './drawer.js';
import { renderHeader } from './header-view.js';
import type { InboxView } from './inbox-view.js';
import type { LogFilter } from './message-log.js';
import type { MessageLogView } from './message-log-view.js';
import type { PageState } from './page-state.js';
import { renderDeadLetters, renderQueues, type DeadLetterActions } from './queues-view.js';
import type { RunActions } from './run-facts.js';
import { renderRuns } from './runs-view.js';
import type { Section } from './snapshot-loader.js';
import { renderStale } from './stale-view.js';
import { renderTasks, type TaskActions } from './tasks-view.js';
import { renderTeams, type TeamActions } from './teams-view.js';
import { timeDomain } from './timeline-model.js';
import type { TimelineView } from './timeline-view.js';
import type { ViewName } from './view-tabs.js';

/** The views that keep state between renders, and what their controls do. */
export interface PageViews {
  readonly log: MessageLogView;
  readonly inbox: InboxView;
  readonly timeline: TimelineView;
  readonly drawer: Drawer;
  readonly agents: AgentActions;
  readonly teams: TeamActions;
  readonly tasks: TaskActions;
  readonly deadLetters: DeadLetterActions;
  readonly runs: RunActions;
}

/** What one render draws from. */
export interface RenderInput {
  readonly state: PageState;
  readonly view: ViewName;
  /** When the live feed went down; undefined while live. */
  readonly staleSince: number | undefined;
  readonly nowMs: number;
}

/**
 * Draws the `dirty` sections of the page from `input.state`. The message log, the timeline and the
 * inbox list are drawn only while their view is shown (the tab switch marks them again).
 */
export function renderPage(dirty: ReadonlySet<Section>, input: RenderInput, views: PageViews): void {
  const { state: s, nowMs: now, view } = input;
  if (dirty.has('header')) {
    renderHeader(byId('stats'), byId('feed-status'), s);
    renderStale(document.body, byId('feed-status'), input.staleSince);
  }
  if (dirty.has('agents')) {
    renderAgents(byId('agents'), s, now, views.agents);
    byId('agents-count').textContent = String(s.agents?.agents.length ?? '');
  }
  if (dirty.has('teams'))
    renderTeams(byId('teams'), s.teams, now, { expanded: s.expandedGoals, actions: views.teams });
  if (dirty.has('tasks')) renderTasks(byId('tasks'), s.tasks, s.busyActions, views.tasks, now);
  if (dirty.has('queues')) {
    renderQueues(byId('queues'), s.mailboxes, s.leases, now);
    renderDeadLetters(byId('dead-letters'), s.deadLetters, s.busyActions, views.deadLetters, now);
  }
  if (dirty.has('log') && view === 'overview') views.log.render(s.log, readFilter());
  if (dirty.has('timeline') && view === 'timeline') {
    const turns = s.turns.all();
    views.timeline.render({
      turns,
      agents: s.agents?.agents ?? [],
      teams: s.teams,
      nowMs: now,
      rangeMs: s.timelineRangeMs,
    });
    renderCostCharts(byId('cost-charts'), turns, timeDomain(turns, now, s.timelineRangeMs), now);
  }
  if (dirty.has('runs')) renderRunsView(s, now, views.runs);
  if (dirty.has('inbox')) {
    views.inbox.render(s.inbox, now, view === 'inbox');
    const unread = views.inbox.unread(s.inbox);
    byId('inbox-count').textContent = unread === 0 ? '' : String(unread);
  }
  if (dirty.has('drawer')) views.drawer.update(now);
}

function renderRunsView(s: PageState, nowMs: number, actions: RunActions): void {
  const fieldset = byId('run-fieldset');
  if (!(fieldset instanceof HTMLFieldSetElement)) return;
  renderRuns(
    byId('runs'),
    { fieldset, reason: byId('run-form-reason') },
    { reply: s.runs, busy: s.busyActions, nowMs },
    actions,
  );
  const active = s.runs?.runs.filter((r) => r.isActive).length ?? 0;
  byId('runs-count').textContent = active === 0 ? '' : String(active);
}

function readFilter(): LogFilter {
  const value = (id: string): string => {
    const node = document.getElementById(id);
    return node instanceof HTMLInputElement ? node.value.trim() : '';
  };
  return { agent: value('filter-agent'), type: value('filter-type'), thread: value('filter-thread') };
}
