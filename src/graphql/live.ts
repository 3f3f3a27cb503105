// What the subscription fields share: the last word of a stream whose reader fell behind.
import { AppError } from "../domain/errors.js";
import type { Live } from "../realtime/charges.js";
import { OVERFLOW } from "../realtime/pubsub.js";

/** A stream's next value, or, when the reader fell too far behind, the error that ends the subscription. */
export function liveValue<T>(value: Live<T>): T {
  if (value === OVERFLOW) {
    throw new AppError(
      "subscription_overflow",
      "Updates arrived faster than this subscription read them, so it was ended; subscribe again to get the current state.",
    );
  }
  return value;
}
