/** The page's views, one per tab. */
export const VIEWS = ['overview', 'timeline', 'runs', 'inbox'] as const;
/** One of {@link VIEWS}. */
export type ViewName = (typeof VIEWS)[number];

/** The view a location hash names (`#runs`; an empty hash is the overview), else undefined. */
export function viewFromHash(hash: string): ViewName | undefined {
  const name = hash.replace(/^#/, '');
  return name === '' ? 'overview' : VIEWS.find((v) => v === name);
}

/**
 * The tab bar: links to `#overview`, `#timeline`, `#runs`, `#inbox` (so the back button and a bookmark
 * work). The named view is shown and the others hidden; its tab gets `aria-current="page"`. Following a
 * tab moves focus to the view's heading, so keyboard and screen-reader users land in it.
 */
export class ViewTabs {
  #current: ViewName;
  readonly #onChange: (view: ViewName) => void;

  constructor(onChange: (view: ViewName) => void) {
    this.#onChange = onChange;
    this.#current = viewFromHash(location.hash) ?? 'overview';
    this.#apply(false);
    window.addEventListener('hashchange', () => {
      // Another fragment (the skip link's #main) keeps the view shown.
      const view = viewFromHash(location.hash);
      if (view === undefined) return;
      this.#current = view;
      this.#apply(true);
    });
  }

  get current(): ViewName {
    return this.#current;
  }

  #apply(isMoving: boolean): void {
    for (const view of VIEWS) {
      const section = document.getElementById(`view-${view}`);
      const tab = document.getElementById(`tab-${view}`);
      if (section !== null) section.hidden = view !== this.#current;
      if (tab === null) continue;
      if (view === this.#current) tab.setAttribute('aria-current', 'page');
      else tab.removeAttribute('aria-current');
    }
    document.body.dataset.view = this.#current;
    if (isMoving) document.getElementById(`view-${this.#current}`)?.querySelector<HTMLElement>('h2')?.focus();
    this.#onChange(this.#current);
  }
}
