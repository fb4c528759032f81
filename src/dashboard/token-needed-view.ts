import { ApiError } from './api-client.js';
import { el } from './dom.js';

/** True for the gateway's answer to a request without (or with a stale) token. */
export function isTokenRefusal(err: unknown): boolean {
  return err instanceof ApiError && err.code === 'GATEWAY_UNAUTHORIZED';
}

/**
 * Hides the page's views, tabs and feed status behind one notice: the hub needs its token, and where
 * to get the URL that carries it. Shown instead of a toast per panel when the page was opened without
 * the token, or when the hub restarted with a new one. The views stay in the document (hidden), so the
 * page's renders keep finding their elements.
 */
export function renderTokenNeeded(page: {
  readonly main: HTMLElement;
  readonly hidden: readonly HTMLElement[];
}): void {
  const code = (text: string): HTMLElement => el('code', {}, text);
  for (const node of [...page.main.querySelectorAll<HTMLElement>('.view'), ...page.hidden])
    node.hidden = true;
  page.main.append(
    el(
      'section',
      { class: 'panel token-needed', data: { testid: 'token-needed' }, aria: { labelledby: 'token-title' } },
      el(
        'div',
        { class: 'empty' },
        el('div', { class: 'empty-mark', aria: { hidden: 'true' } }, '鍵'),
        el('h2', { id: 'token-title', class: 'empty-title' }, 'This hub needs its token'),
        el(
          'p',
          { class: 'empty-hint' },
          'Open the address ',
          code('musubi up'),
          ' printed when it started (it ends in ',
          code('?token=…'),
          '), or run ',
          code('musubi dashboard --open'),
          ' as the user who started the hub. Each start makes a new token, so a page left open from an ' +
            'earlier start needs the new address.',
        ),
      ),
    ),
  );
}
