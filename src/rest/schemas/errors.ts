// The error body as /v1/openapi.json shows it: its code one of the API's codes. What each code means
// lives beside the codes (domain/errors.ts ERROR_MEANINGS); the document's introduction lists them.
import { z } from "zod";
import type { ErrorCode } from "../../domain/errors.js";
import { ErrorBody, STATUS_OF_CODE } from "../../http/errors.js";
import { named } from "./components.js";

/** Every error code, in STATUS_OF_CODE's order (which the compiler holds complete). */
export const ERROR_CODES = Object.keys(STATUS_OF_CODE) as [ErrorCode, ...ErrorCode[]];

/** The error body, its code one of ERROR_CODES. */
export const ApiError = named("Error", ErrorBody.extend({ code: z.enum(ERROR_CODES).meta(ErrorBody.shape.code.meta() ?? {}) }));
