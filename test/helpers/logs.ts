// A pino logger that keeps what it writes, for tests that check what an operator is told.
import { type Logger, pino } from "pino";

/** One log line, parsed. */
export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

/** A debug-level logger and what it wrote so far: parsed lines, and the raw text. */
export function recordingLogger(): { logger: Logger; lines: () => LogLine[]; text: () => string } {
  const raw: string[] = [];
  const logger = pino({ level: "debug" }, { write: (s: string) => void raw.push(s) });
  return { logger, lines: () => raw.map((s) => JSON.parse(s) as LogLine), text: () => raw.join("") };
}
