// `npm run build`'s step after tsc: writes dist/db/template.tar.gz and template.json (src/db/template.ts).
// A template already made from these very migrations, migrator and PGlite, and whole (its sha256), is
// kept: any other source change rebuilds the server, and redoing the template (PGlite's initdb) would
// add seconds for nothing. One cut by an interrupted build fails the check and is made again.
import { readTemplate, writeTemplate } from "./template.js";

if (readTemplate() === null) await writeTemplate();
