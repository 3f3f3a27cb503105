// Pages loaded when first shown: each page's code is a chunk of its own (the build splits them out),
// so the first load carries the shell and the home page only.
import type { ComponentType, FunctionComponent } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ErrorNote } from "./ui.js";

/** A component that fetches its code on first render (once for every use), showing "Loading…" until then. */
export function lazyPage<P extends object>(load: () => Promise<ComponentType<P>>): FunctionComponent<P> {
  let loaded: ComponentType<P> | null = null;
  let pending: Promise<ComponentType<P>> | null = null;
  return function LazyPage(props: P) {
    // A counter, not the component: a function given to a state setter would be called as an updater.
    const [, setLoads] = useState(0);
    const [error, setError] = useState<Error | null>(null);
    useEffect(() => {
      if (loaded) return;
      pending ??= load().then((page) => (loaded = page));
      pending.then(
        () => setLoads((n) => n + 1),
        (err: Error) => {
          // A later render may try again (the chunk of an earlier deployment is gone: a reload fixes it).
          pending = null;
          setError(new Error(`This page could not be loaded (${err.message}). Reload the dashboard.`));
        },
      );
    }, []);
    if (error) return <ErrorNote error={error} />;
    if (!loaded) return <p class="loading">Loading…</p>;
    const Page = loaded;
    return <Page {...props} />;
  };
}
