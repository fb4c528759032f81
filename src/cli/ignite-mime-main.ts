// The lean entry of the IGNITE mime tool (`musubi-ignite-mime`): agents call it once per message from
// their shell commands, so it loads only node built-ins and the mime modules (no commander, bus or store),
// and is bundled as one CommonJS file (no ESM loader start-up). Hence no top-level await here.
import { runMimeTool } from './ignite/mime-tool.js';
import { processToolIo } from './ignite/tool-io.js';

void runMimeTool(processToolIo(process.argv.slice(2))).then((code) => {
  process.exitCode = code;
});
