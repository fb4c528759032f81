import type { ApiClient } from './api-client.js';
import type { Drawer } from './drawer.js';
import { MessagePanel } from './message-panel.js';
import type { PageState } from './page-state.js';
import type { RunActions } from './run-facts.js';
import { RunPanel } from './run-panel.js';
import { AgentTurnsPanel, TranscriptPanel, type TurnPanelDeps } from './turn-panels.js';
import type { RunView } from '../gateways/http/api-schemas.js';

/** What opening the drawer's panels needs from the page. */
export interface DrawerOpenersDeps {
  readonly api: ApiClient;
  readonly state: PageState;
  readonly drawer: Drawer;
  readonly onError: (err: unknown) => void;
  readonly runActions: RunActions;
}

/** Opens each kind of drawer panel: an agent's turns, a transcript, a message, a run. */
export class DrawerOpeners {
  readonly #deps: DrawerOpenersDeps;
  readonly #turnDeps: TurnPanelDeps;

  constructor(deps: DrawerOpenersDeps) {
    this.#deps = deps;
    const { api, state, drawer, onError } = deps;
    this.#turnDeps = {
      api,
      turns: state.turns,
      agent: (name) => state.agents?.agents.find((a) => a.name === name),
      openTurn: (id) => drawer.push(new TranscriptPanel(id, this.#turnDeps)),
      onError,
      onLoaded: () => drawer.syncTitle(),
    };
  }

  /** An agent's turns, newest first. */
  agent(name: string): void {
    this.#deps.drawer.open(new AgentTurnsPanel(name, this.#turnDeps));
  }

  /** One turn's transcript. */
  turn(turnId: string): void {
    this.#deps.drawer.open(new TranscriptPanel(turnId, this.#turnDeps));
  }

  /** One message's envelope and history; above the current panel when the drawer is open. */
  message(messageId: string): void {
    const { api, drawer, onError } = this.#deps;
    const panel = new MessagePanel(messageId, { api, onError, onLoaded: () => drawer.syncTitle() });
    drawer.open(panel);
  }

  /** One run: plan, phases, subtasks, conflicts, tests. */
  run(runId: string): void {
    const { api, state, drawer, onError, runActions } = this.#deps;
    const remember = (run: RunView): void => {
      const runs = state.runs;
      if (runs === undefined) return;
      const index = runs.runs.findIndex((r) => r.id === run.id);
      if (index >= 0) runs.runs[index] = run;
      else runs.runs.unshift(run);
    };
    const panel = new RunPanel(runId, {
      api,
      run: (id) => state.runs?.runs.find((r) => r.id === id),
      remember,
      busy: state.busyActions,
      actions: runActions,
      openDelivery: (messageId) =>
        drawer.push(new MessagePanel(messageId, { api, onError, onLoaded: () => drawer.syncTitle() })),
      onLoaded: () => drawer.syncTitle(),
      onError,
    });
    drawer.open(panel);
  }
}
