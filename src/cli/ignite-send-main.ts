// The lean entry of the IGNITE send tool (`musubi-ignite-send`): node built-ins and the mime modules only,
// bundled as one CommonJS file (hence no top-level await). Run through a wrapper or link named
// `send_message.sh` (or with MUSUBI_IGNITE_SEND_NAME set by one), its texts name `send_message.sh` as
// IGNITE's did.
import { basename } from 'node:path';
import { runSendTool, SEND_TOOL_NAME } from './ignite/send-tool.js';
import { processToolIo } from './ignite/tool-io.js';

const invokedAs = basename(process.argv[1] ?? '');
const wrapper = process.env['MUSUBI_IGNITE_SEND_NAME'];
const tool =
  invokedAs === 'send_message.sh' ? invokedAs : wrapper === 'send_message.sh' ? wrapper : SEND_TOOL_NAME;
void runSendTool(processToolIo(process.argv.slice(2)), tool).then((code) => {
  process.exitCode = code;
});
