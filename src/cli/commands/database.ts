// The database's own commands: `migrate`, and `backup` / `restore` of the embedded database.
import { backupEmbedded, restoreEmbedded } from "../../db/backup.js";
import type { Config } from "../../config.js";
import { type Command, commandError, UsageError } from "../command.js";

/** backup and restore copy the embedded database's files: PostgreSQL has its own tools. */
function embeddedOnly(config: Config, command: string): void {
  if (config.databaseUrl) throw new UsageError(`${command} is for the embedded database; back up PostgreSQL with pg_dump and restore with pg_restore.`);
}

export const databaseCommands: Command[] = [
  {
    names: ["migrate"],
    usage: "  migrate                                                Applies pending database migrations.",
    async run({ open, print }) {
      // Even with AUTO_MIGRATE off: then this is the only migrator.
      const { migrations } = await open({ migrate: true });
      print(
        migrations.length === 0
          ? "Database is up to date: no migration to apply."
          : `Applied ${migrations.length} migration(s):\n${migrations.map((m) => `  ${m}`).join("\n")}`,
        { ok: true, applied: migrations },
      );
    },
  },
  {
    names: ["backup"],
    usage: `  backup --out FILE                                      Copies the embedded database (and the devnet's
                                                         chain state) to FILE (stop the service first;
                                                         PostgreSQL: use pg_dump).`,
    async run({ config, flags }) {
      embeddedOnly(config, "backup");
      if (!flags.out) throw new UsageError("Usage: stablegate backup --out FILE");
      const { bytes, devnet } = await backupEmbedded(config.dataDir, flags.out).catch(commandError);
      const what = devnet ? "the embedded database and the devnet's chain state" : "the embedded database";
      console.log(`Backed up ${what} in ${config.dataDir} to ${flags.out} (${bytes} bytes).`);
    },
  },
  {
    names: ["restore"],
    usage: `  restore FILE [--force]                                 Makes FILE the embedded database in DATA_DIR
                                                         (--force replaces the one there) once all of
                                                         it reads back; a bad file changes nothing.`,
    async run({ config, flags, args }) {
      embeddedOnly(config, "restore");
      const [file] = args;
      if (!file) throw new UsageError("Usage: stablegate restore FILE [--force]");
      const { devnet } = await restoreEmbedded(config.dataDir, file, { force: flags.force }).catch(commandError);
      console.log(
        devnet
          ? `Restored ${file} into ${config.dataDir} (the database and the devnet's chain state).`
          : `Restored ${file} into ${config.dataDir}. The file holds no devnet state: a devnet started here starts over, and the indexer follows it from its new head.`,
      );
    },
  },
];
