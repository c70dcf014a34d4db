// Prints `export KEY='value'` lines for the variables of a .env file that the environment does
// not set already — the file as the service reads it (process.loadEnvFile: real environment
// variables win). The shell scripts eval this rather than sourcing .env, which let the file
// override what a caller had set.
const { readFileSync } = require('node:fs');
const { parseEnv } = require('node:util');

const quoted = (v) => `'${v.replace(/'/g, `'\\''`)}'`;
const vars = parseEnv(readFileSync(process.argv[2] ?? '.env', 'utf8'));
for (const [key, value] of Object.entries(vars)) {
  if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(key) && process.env[key] === undefined) {
    console.log(`export ${key}=${quoted(value)}`);
  }
}
