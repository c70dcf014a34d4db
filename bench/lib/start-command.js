// The service's node arguments as `npm start` gives them (package.json), so that the bench
// measures the service as it is run, heap settings included.
const { readFileSync } = require('node:fs');
const { resolve } = require('node:path');

/** The arguments between `node` and the script in package.json's start. */
function startNodeArgs(root) {
  const { scripts } = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8'));
  const words = scripts.start.split(/\s+/);
  if (words[0] !== 'node')
    throw new Error(`package.json start does not run node: ${scripts.start}`);
  return words.slice(1, -1);
}

module.exports = { startNodeArgs };
