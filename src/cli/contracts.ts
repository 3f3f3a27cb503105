// `npm run contracts`: compile the Solidity sources into the committed artifacts.
import { ARTIFACTS_FILE, writeArtifacts } from "../chain/contracts/compile.js";

const names = writeArtifacts();
process.stdout.write(`Compiled ${names.join(", ")} into ${ARTIFACTS_FILE}\n`);
