// Types of .config/build.mjs for the tests that import it.
/** One part of the build: what it reads, what it writes, how it is made. */
export interface BuildPart {
  name: string;
  inputs: string[];
  skip: string[];
  outputs: string[];
  build: (() => void)[];
}
export const STAMP: string;
export const PARTS: BuildPart[];
export function fingerprint(part: BuildPart, base?: string): string;
export function build(options?: { all?: boolean; log?: (line: string) => void; parts?: BuildPart[]; base?: string; stampFile?: string }): string[];
