import type { Session } from './api.js';

/** One page: draws into `root`; may return a cleanup (a refresh timer) run when the page is left. */
export type Page = (
  root: HTMLElement,
  session: Session,
  params: URLSearchParams,
) => Promise<(() => void) | void>;

/** Moves to a page with these parameters (the hash is the console's address: shareable, back-button). */
export function go(page: string, params: Record<string, string | undefined> = {}): void {
  const entries = Object.entries(params).filter(
    (e): e is [string, string] => e[1] !== undefined && e[1] !== '',
  );
  const query = new URLSearchParams(entries).toString();
  location.hash = `#/${page}${query ? `?${query}` : ''}`;
}
