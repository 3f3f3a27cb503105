// A file written whole or not at all: written aside under a name of its own, then renamed over the
// target. Invariant: a reader (another process, the next start after a crash) finds the old content
// or the new, never half of the new; a failed write leaves no file aside.
import { renameSync, rmSync, writeFileSync } from "node:fs";

/** Tells apart the writes of one process; the pid tells processes apart. */
let writes = 0;

/** Replaces `path` with `data` at once (written aside in the same directory, then renamed); `mode`: its permissions. */
export function writeFileAtomic(path: string, data: string | Uint8Array, { mode }: { mode?: number } = {}): void {
  const partial = `${path}.${process.pid}-${++writes}.tmp`;
  try {
    writeFileSync(partial, data, mode === undefined ? {} : { mode });
    renameSync(partial, path);
  } catch (e) {
    rmSync(partial, { force: true });
    throw e;
  }
}
