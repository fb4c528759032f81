// The lean entry of the IGNITE mime tool (`musubi-ignite-mime`): agents call it once per message from
// their shell commands, so it loads only node built-ins and the mime modules (no commander, bus or store).
import { runMimeTool } from './ignite/mime-tool.js';
import { processToolIo } from './ignite/tool-io.js';

process.exitCode = await runMimeTool(processToolIo(process.argv.slice(2)));
