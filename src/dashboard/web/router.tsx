// A small history router for the pages under /dashboard: links update the URL without a reload, and
// the back button works.
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";

export const BASE = "/dashboard";

/** The path below /dashboard ("/" for the home page), following navigation. */
export function usePath(): string {
  const [path, setPath] = useState(current());
  useEffect(() => {
    const update = () => setPath(current());
    addEventListener("popstate", update);
    addEventListener("dashboard:navigate", update);
    return () => {
      removeEventListener("popstate", update);
      removeEventListener("dashboard:navigate", update);
    };
  }, []);
  return path;
}

/** Goes to `path` (below /dashboard) without reloading. */
export function navigate(path: string): void {
  history.pushState(null, "", BASE + path);
  dispatchEvent(new Event("dashboard:navigate"));
  scrollTo(0, 0);
}

/** A link to a dashboard page; modified clicks (new tab) keep the browser's behaviour. */
export function Link(props: { href: string; children: ComponentChildren; class?: string; "aria-current"?: "page" }) {
  return (
    <a
      href={BASE + props.href}
      class={props.class}
      aria-current={props["aria-current"]}
      onClick={(e) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(props.href);
      }}
    >
      {props.children}
    </a>
  );
}

/** A change to the query string: a value sets its parameter, null, undefined or "" removes it. */
export type QueryChange = Record<string, string | number | null | undefined>;

/**
 * A page's state in its query string (filters, search, how many rows are shown), so a reload and Back
 * restore it: the parameters now, following navigation, and the way to change them. A change is a new
 * history entry ("push", for filters: Back undoes it) or replaces the current one ("replace", for
 * "Show more": Back leaves the page as it was left).
 */
export function useQueryState(): [URLSearchParams, (change: QueryChange, how?: "push" | "replace") => void] {
  const [search, setSearch] = useState(location.search);
  useEffect(() => {
    const update = () => setSearch(location.search);
    addEventListener("popstate", update);
    addEventListener("dashboard:navigate", update);
    return () => {
      removeEventListener("popstate", update);
      removeEventListener("dashboard:navigate", update);
    };
  }, []);
  const change = (values: QueryChange, how: "push" | "replace" = "push") => {
    const next = new URLSearchParams(location.search);
    for (const [key, value] of Object.entries(values)) {
      if (value == null || value === "") next.delete(key);
      else next.set(key, String(value));
    }
    const query = next.toString();
    const url = `${location.pathname}${query ? `?${query}` : ""}`;
    if (url === `${location.pathname}${location.search}`) return;
    if (how === "push") history.pushState(null, "", url);
    else history.replaceState(null, "", url);
    dispatchEvent(new Event("dashboard:navigate"));
  };
  return [new URLSearchParams(search), change];
}

/** How many rows a list shows: the `shown` parameter (a multiple of `step`, at most `max`), else `step`. */
export function shownRows(query: URLSearchParams, step: number, max: number): number {
  const shown = Number(query.get("shown"));
  return Number.isInteger(shown) && shown >= step ? Math.min(max, shown - (shown % step)) : step;
}

function current(): string {
  const rest = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : "/";
  return rest === "" ? "/" : rest.replace(/\/+$/, "") || "/";
}
