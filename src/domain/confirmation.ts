// What a guarded action (making API keys or users, turning two-factor off, new recovery codes)
// awaits before it acts: proof that whoever asks may do it. From the dashboard that is a
// re-authentication (domain/reauthentication.ts `confirmedBySession`); the command line and seeding
// run with the database's own rights and say so with OPERATOR. A leaf: the guarded modules import it
// and nothing of theirs, so reauthentication.ts can import them without an import circle.

/** Resolves when the action may go ahead; throws (403 `reauthentication_required`) when not. */
export type Confirmation = () => Promise<void>;

/** The operator's own tools (CLI, seeding): they hold the database, so there is nothing to prove. */
export const OPERATOR: Confirmation = async () => {};
