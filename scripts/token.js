#!/usr/bin/env node
// Prints a signed HS256 development token:
//   npm run token -- --sub alice --role student [--ttl 1h]
// The secret comes from JWT_SECRET in the environment, or from ./.env.
const { existsSync } = require('node:fs');
const { parseArgs } = require('node:util');
const jwt = require('jsonwebtoken');

function fail(message) {
  console.error(`token: ${message}`);
  console.error('usage: npm run token -- --sub alice --role student|admin [--ttl 1h]');
  process.exit(2);
}

let values;
try {
  ({ values } = parseArgs({
    options: { sub: { type: 'string' }, role: { type: 'string' }, ttl: { type: 'string' } },
  }));
} catch (err) {
  fail(err.message);
}
if (!process.env.JWT_SECRET && existsSync('.env')) process.loadEnvFile('.env');
const secret = process.env.JWT_SECRET;
if (!secret) fail('JWT_SECRET is not set (export it, or run `npm run up` once to write .env)');
if (!values.sub || !/^[A-Za-z0-9_.:@-]{1,64}$/.test(values.sub)) {
  fail('--sub must be 1-64 characters of [A-Za-z0-9_.:@-]');
}
if (values.role !== 'student' && values.role !== 'admin') fail('--role must be student or admin');
const ttl = values.ttl ?? '1h';
if (!/^\d+[smhd]?$/.test(ttl)) fail('--ttl must look like 90, 30s, 15m, 1h or 7d');

const expiresIn = /^\d+$/.test(ttl) ? Number(ttl) : ttl;
process.stdout.write(
  jwt.sign({ sub: values.sub, role: values.role }, secret, { algorithm: 'HS256', expiresIn }) +
    '\n',
);
