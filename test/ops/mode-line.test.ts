// `npm start` says at start which mode NODE_ENV selected and what that mode turns on.
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { logMode } from "../../src/process.js";
import { recordingLogger } from "../helpers/logs.js";

function modeLines(env: Record<string, string>) {
  const { logger, lines } = recordingLogger();
  logMode(logger, loadConfig(env));
  return lines();
}

describe("the mode line", () => {
  it("warns that NODE_ENV unset means development, what that turns on, and how to deploy", () => {
    const [line, ...more] = modeLines({});
    expect(more).toEqual([]);
    expect(line).toMatchObject({ level: 40, mode: "development" });
    expect(line!.msg).toMatch(/^running in development mode \(the default when NODE_ENV is unset\): GraphiQL on .*demo merchant.*local devnet chain.*runs/);
    expect(line!.msg).toMatch(/set NODE_ENV=production for a deployment$/);
  });

  it("says when development runs without the devnet", () => {
    expect(modeLines({ DEVNET: "false" })[0]!.msg).toMatch(/no local devnet/);
  });

  it("is a plain info line in production", () => {
    const [line] = modeLines({ NODE_ENV: "production" });
    expect(line).toMatchObject({ level: 30, mode: "production", msg: "running in production mode: GraphiQL off, no demo merchant, no local devnet" });
  });
});
