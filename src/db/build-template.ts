// `npm run build`'s step after tsc: writes dist/db/template.tar.gz and template.json (src/db/template.ts).
// A template already made from these very migrations and this PGlite is kept: any other source change
// rebuilds the server, and redoing the template (PGlite's initdb) would add seconds for nothing.
import { readTemplate, writeTemplate } from "./template.js";

if (readTemplate() === null) await writeTemplate();
