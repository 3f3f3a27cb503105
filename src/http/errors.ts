// The one mapping from any thrown value to the API's flat error body (API.md "Errors").
import { maxHeaderSize } from "node:http";
import { AppError } from "../domain/errors.js";

/** The JSON body of every error response. */
export interface ErrorBody {
  statusCode: number;
  error: string;
  code: string;
  message: string;
  param: string | null;
  requestId: string;
}

const BODY_LIMIT_KB = 100;

/** Converts framework and unexpected errors to AppErrors; unknown failures become a bare 500. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const e = err as { code?: string; statusCode?: number; message?: string };
  switch (e.code) {
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return new AppError(400, "body_invalid_json", "Request bodies must be JSON sent with 'Content-Type: application/json'");
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return new AppError(400, "body_invalid_json", "The body is empty but Content-Type is application/json; send a JSON object");
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return new AppError(400, "parameter_invalid", `The request body is larger than ${BODY_LIMIT_KB} KB`);
    case "FST_ERR_CTP_INVALID_JSON_BODY":
      // onProtoPoisoning/onConstructorPoisoning end up here too, without saying so.
      return new AppError(400, "body_invalid_json", "The request body is not valid JSON, or has a __proto__ or constructor.prototype key (refused)");
    case "FST_ERR_BAD_URL":
      return new AppError(400, "parameter_invalid", "The request URL is malformed: check its percent-encoding");
    // The rest come from Node's HTTP parser, before there is a request (server.ts answerUnparsedRequest).
    case "HPE_HEADER_OVERFLOW":
      return new AppError(431, "parameter_invalid", `The request line and headers are larger than ${maxHeaderSize / 1024} KB`);
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return new AppError(408, "parameter_invalid", "The request did not arrive in time");
  }
  if (e.code?.startsWith("HPE_")) {
    return new AppError(400, "parameter_invalid", "The request is not valid HTTP/1.1: check its method, request line, headers and body framing");
  }
  if (e.statusCode === 400 && err instanceof SyntaxError) {
    return new AppError(400, "body_invalid_json", `The request body is not valid JSON: ${e.message}`);
  }
  if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500) {
    return new AppError(400, "parameter_invalid", "The request could not be read: check its headers and body");
  }
  return new AppError(500, "internal_error", "An internal error occurred. It has been logged; retry later or contact the operator with the request id.");
}

/** The body for `err` on the request `requestId`. */
export function errorBody(err: AppError, requestId: string): ErrorBody {
  return { statusCode: err.status, error: err.error, code: err.code, message: err.message, param: err.param, requestId };
}

export const BODY_LIMIT_BYTES = BODY_LIMIT_KB * 1024;
