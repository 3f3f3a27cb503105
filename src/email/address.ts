// Email addresses and header values as they may go into a message's headers. A value with CR or LF
// could add headers of its own (Bcc: to anyone): such values are refused, never cleaned up.
import { z } from "zod";

const address = z.email().max(254);

/** Whether `value` is one plain email address, safe as a header (no name, no list, no line breaks). */
export function isEmailAddress(value: string): boolean {
  return !/[\r\n,;<>"]/.test(value) && address.safeParse(value).success;
}

/** Whether `value` may go into a header as it is (a subject, a display name): one line, no control characters. */
export function isHeaderSafe(value: string): boolean {
  return !/[\u0000-\u001f\u007f]/.test(value);
}

/** A display name made header-safe: control characters become spaces, and its length is bounded. */
export function headerText(value: string, max = 200): string {
  return value
    .replace(/[\u0000-\u001f\u007f]+/g, " ")
    .trim()
    .slice(0, max);
}
