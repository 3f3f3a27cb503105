// Running a page's mutations: the last one's error and whether one is running, so that every page
// shows a failed action the same way and acts on a success only.
import type { CombinedError, OperationResult } from "@urql/core";
import { useState } from "preact/hooks";

/** The state of a page's actions, and `run`, which performs one. */
export interface Action {
  error: CombinedError | null;
  running: boolean;
  /** Runs `mutation`; on success calls `done` with its data. Resolves whether it succeeded. */
  run: <D>(mutation: () => Promise<OperationResult<D, any>>, done?: (data: D) => void) => Promise<boolean>;
}

/** One state for a page's (or a section's) actions: a new action clears the last one's error. */
export function useAction(): Action {
  const [error, setError] = useState<CombinedError | null>(null);
  const [running, setRunning] = useState(false);
  const run: Action["run"] = async (mutation, done) => {
    setError(null);
    setRunning(true);
    const result = await mutation();
    setRunning(false);
    if (result.error || result.data == null) {
      setError(result.error ?? null);
      return false;
    }
    done?.(result.data);
    return true;
  };
  return { error, running, run };
}
