import type { BusEvent } from '../gateways/http/api-schemas.js';

/** What the drawer shows: one panel (a transcript, a message, a run…) that keeps its own element. */
export interface DrawerPanel {
  /** Named on the dialog as `data-view` (browser tests wait on it). */
  readonly view: string;
  /** The drawer's heading while the panel is shown; read again on every update. */
  readonly title: string;
  /** The panel's content, built once and kept (expanded details, scroll and focus survive updates). */
  readonly element: HTMLElement;
  /** Brings the element up to date (data arrived, time passed). */
  update(nowMs: number): void;
  /** A live event; the panel updates itself when the event concerns it. */
  onEvent?(event: BusEvent): void;
  /** The panel left the drawer for good: stop timers and requests. */
  dispose?(): void;
}

/** The drawer's elements in index.html. */
export interface DrawerElements {
  readonly dialog: HTMLDialogElement;
  readonly title: HTMLElement;
  readonly body: HTMLElement;
  readonly back: HTMLButtonElement;
  readonly close: HTMLButtonElement;
  /** The toast container: moved into the open dialog, where the modal's top layer does not hide it. */
  readonly toasts: HTMLElement;
}

/**
 * The side drawer: a modal `<dialog>` (focus stays inside, the page behind is inert, Escape closes it)
 * holding a stack of panels, the top one shown; Back returns to the one below. Closing returns focus
 * to where it was when the drawer opened: that element, or one with the same `data-key` or id when a
 * render replaced it meanwhile.
 */
export class Drawer {
  readonly #el: DrawerElements;
  readonly #stack: DrawerPanel[] = [];
  #returnTo: ReturnTarget | undefined;

  constructor(elements: DrawerElements) {
    this.#el = elements;
    elements.close.addEventListener('click', () => this.close());
    elements.back.addEventListener('click', () => this.back());
    // Escape: the dialog's own cancel; closing by any means goes through close() for focus and disposal.
    elements.dialog.addEventListener('close', () => this.#closed());
    // A click on the backdrop (outside the panel's box) closes it too.
    elements.dialog.addEventListener('click', (event) => {
      if (event.target === elements.dialog) this.close();
    });
  }

  /** Shows `panel` alone (a fresh stack), opening the drawer when it is closed. */
  open(panel: DrawerPanel): void {
    const wasOpen = this.#el.dialog.open;
    if (!wasOpen) this.#remember();
    for (const old of this.#stack.splice(0)) old.dispose?.();
    this.#stack.push(panel);
    this.#show(wasOpen);
  }

  /** Shows `panel` above the current one; Back returns. */
  push(panel: DrawerPanel): void {
    if (!this.#el.dialog.open) return this.open(panel);
    this.#stack.push(panel);
    this.#show(true);
  }

  /** Returns to the panel below, or closes when there is none. */
  back(): void {
    if (this.#stack.length <= 1) return this.close();
    this.#stack.pop()?.dispose?.();
    this.#show(true);
  }

  close(): void {
    if (this.#el.dialog.open) this.#el.dialog.close();
    else this.#closed();
  }

  /** The panel shown, if the drawer is open. */
  get current(): DrawerPanel | undefined {
    return this.#el.dialog.open ? this.#stack.at(-1) : undefined;
  }

  /** Updates the panel shown (a tick, new data). */
  update(nowMs: number): void {
    const panel = this.current;
    if (panel === undefined) return;
    panel.update(nowMs);
    this.#el.title.textContent = panel.title;
  }

  /** Reads the shown panel's title again (its data arrived). */
  syncTitle(): void {
    const top = this.current;
    if (top !== undefined) this.#el.title.textContent = top.title;
  }

  /** Hands a live event to every panel in the stack (those below stay current for Back). */
  onEvent(event: BusEvent): void {
    for (const panel of this.#stack) panel.onEvent?.(event);
    this.syncTitle();
  }

  #show(isMoving: boolean): void {
    const panel = this.#stack.at(-1);
    if (panel === undefined) return;
    const { dialog, title, body, back, toasts } = this.#el;
    panel.update(Date.now());
    title.textContent = panel.title;
    dialog.dataset.view = panel.view;
    back.hidden = this.#stack.length <= 1;
    body.replaceChildren(panel.element);
    body.scrollTop = 0;
    if (!dialog.open) {
      dialog.appendChild(toasts);
      dialog.showModal();
    }
    // A new panel in an open drawer: the heading takes focus, so a screen reader hears where it is.
    if (isMoving) title.focus();
  }

  #remember(): void {
    const active = document.activeElement;
    if (!(active instanceof HTMLElement) || active === document.body) {
      this.#returnTo = undefined;
      return;
    }
    const key = active.closest<HTMLElement>('[data-key]')?.dataset.key;
    const firstClass = active.classList[0];
    const selector =
      firstClass === undefined ? active.localName : `${active.localName}.${CSS.escape(firstClass)}`;
    this.#returnTo = { node: active, id: active.id, selector, ...(key !== undefined && { key }) };
  }

  #closed(): void {
    for (const old of this.#stack.splice(0)) old.dispose?.();
    this.#el.body.replaceChildren();
    delete this.#el.dialog.dataset.view;
    document.body.appendChild(this.#el.toasts);
    const target = this.#returnTo;
    this.#returnTo = undefined;
    if (target !== undefined) findAgain(target)?.focus();
  }
}

/** Where focus goes back to when the drawer closes. */
interface ReturnTarget {
  readonly node: HTMLElement;
  readonly id: string;
  /** The `data-key` of the row or card it was in (renders replace changed rows by key). */
  readonly key?: string;
  /** Tag and first class, to find the same control in a replaced row. */
  readonly selector: string;
}

/** The element focus returns to: the one remembered, or its replacement in a re-rendered row. */
function findAgain(target: ReturnTarget): HTMLElement | null {
  if (target.node.isConnected) return target.node;
  if (target.key !== undefined) {
    const box = document.querySelector<HTMLElement>(`[data-key="${CSS.escape(target.key)}"]`);
    if (box === null) return null;
    return box.matches(target.selector) ? box : box.querySelector<HTMLElement>(target.selector);
  }
  return target.id === '' ? null : document.getElementById(target.id);
}
