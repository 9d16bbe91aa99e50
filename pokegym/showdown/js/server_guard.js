// Starts Pokémon Showdown's server in this process and stops it, with every process it
// started, once standard input closes. The Python process that owns the server holds
// the other end of that pipe: the kernel closes it however that process ends (exit,
// Ctrl-C, SIGTERM without a handler, SIGKILL), so no server outlives its owner.
//
// Usage: node server_guard.js SHOWDOWN_DIR start --skip-build --no-security PORT
'use strict';

const path = require('path');

const [showdownDir, ...args] = process.argv.slice(2);

let stopping = false;
function stop() {
  if (stopping) return;
  stopping = true;
  // This process leads its own process group (the owner starts it in a new session):
  // the signal reaches the server's workers too.
  try {
    process.kill(-process.pid, 'SIGTERM');
  } catch (err) {
    process.exit(0);
  }
  setTimeout(() => process.exit(0), 2000).unref();
}

process.stdin.on('data', () => {});
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.on('error', stop);
process.stdin.resume();

const script = path.join(showdownDir, 'pokemon-showdown');
process.chdir(showdownDir);
process.argv = [process.argv[0], script, ...args];
require(script);
