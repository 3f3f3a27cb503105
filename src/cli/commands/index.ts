// Every `stablegate` command, in the order --help lists them.
import type { Command } from "../command.js";
import { databaseCommands } from "./database.js";
import { devnetCommands } from "./devnet.js";
import { jwtCommands, keyCommands } from "./keys.js";
import { listenCommands } from "./listen.js";
import { merchantCommands } from "./merchant.js";
import { operationCommands } from "./operations.js";
import { userCommands } from "./users.js";
import { webhookCommands } from "./webhooks.js";

export const COMMANDS: readonly Command[] = [
  ...merchantCommands,
  ...keyCommands,
  ...userCommands,
  ...jwtCommands,
  ...webhookCommands,
  ...operationCommands,
  ...databaseCommands,
  ...devnetCommands,
  ...listenCommands,
];
