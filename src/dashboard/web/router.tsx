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

function current(): string {
  const rest = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : "/";
  return rest === "" ? "/" : rest.replace(/\/+$/, "") || "/";
}
