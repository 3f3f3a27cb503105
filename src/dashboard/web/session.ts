// The dashboard session endpoints (sign in, read, switch mode, sign out, and without a session: forgot
// password, reset it, accept an invitation): plain fetches, since the cookie they set is what /graphql then uses.

export interface Session {
  id: string;
  mode: "test" | "live";
  csrfToken: string;
  user: { id: string; email: string; role: Role; totpEnabled: boolean };
  /** What the user's role may do (.docs/dashboard.md "Roles"): the page hides or disables the rest. */
  capabilities: Capability[];
}

export type Role = "owner" | "admin" | "developer" | "support" | "viewer";
export type Capability = "team" | "settings" | "developers" | "money" | "billing" | "security" | "account";

/** Whether the signed-in role may do what `capability` covers. */
export function may(session: Session, capability: Capability): boolean {
  return session.capabilities.includes(capability);
}

/** An error answer of the API: its code and message, shown as they are. */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

async function call<T>(method: string, body?: unknown, csrf?: string, path = "/dashboard/session"): Promise<T> {
  const res = await fetch(path, {
    method,
    credentials: "same-origin",
    headers: { ...(body !== undefined && { "content-type": "application/json" }), ...(csrf && { "x-csrf-token": csrf }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status === 204) return undefined as T;
  const json = await res.json();
  if (!res.ok) throw new ApiError(json.code, json.message, json.param);
  return json as T;
}

/** The signed-in session, or null when there is none. */
export async function currentSession(): Promise<Session | null> {
  try {
    return await call<Session>("GET");
  } catch (e) {
    if (e instanceof ApiError && e.code === "session_invalid") return null;
    throw e;
  }
}

export const signIn = (input: { email: string; password: string; totpCode?: string; mode?: "test" | "live" }) => call<Session>("POST", input);
export const switchMode = (session: Session, mode: "test" | "live") => call<Session>("PATCH", { mode }, session.csrfToken);
export const signOut = (session: Session) => call<void>("DELETE", undefined, session.csrfToken);

/** "Forgot password?": asks for a reset link by email; the answer is the same whether or not the email has an account. */
export const forgotPassword = (email: string) => call<{ message: string }>("POST", { email }, undefined, "/dashboard/password/forgot");
/** Sets a new password with the emailed link's token; every session of the user ends. */
export const resetPassword = (token: string, password: string) =>
  call<{ message: string }>("POST", { token, password }, undefined, "/dashboard/password/reset");
/** Accepts an invitation with its token and the chosen password: the new user is signed in. */
export const acceptInvitation = (token: string, password: string) => call<Session>("POST", { token, password }, undefined, "/dashboard/invitations/accept");
