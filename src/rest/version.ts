// API versions (.docs/api.md "REST conventions"): a caller pins the behaviour it was written against with
// a `Stablegate-Version: YYYY-MM-DD` request header, and every /v1 answer names the version it was
// given in the same header. A version is named by the date its behaviour was fixed. With one version
// so far, every answer names it; a second one would be kept per request and echoed instead.
import { AppError } from "../domain/errors.js";

/** The request and response header that carries the version. */
export const VERSION_HEADER = "Stablegate-Version";

/** The version this build speaks, and the one a request without the header gets. */
export const API_VERSION = "2026-11-24";

/** Every version a caller may ask for, oldest first (one so far). */
const VERSIONS: readonly string[] = [API_VERSION];

/** Refuses a version this build does not speak: 400 parameter_invalid naming the header (absent is fine: the current one). */
export function checkVersion(value: string | undefined): void {
  if (value === undefined || VERSIONS.includes(value)) return;
  const shape = /^\d{4}-\d\d-\d\d$/.test(value) ? "is not a version of this API" : "must be a date YYYY-MM-DD";
  throw new AppError("parameter_invalid", `${VERSION_HEADER} '${value.slice(0, 40)}' ${shape}; the versions are: ${VERSIONS.join(", ")}`, VERSION_HEADER);
}
