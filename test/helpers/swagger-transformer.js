// ts-jest runs the same @nestjs/swagger compiler plugin, with the same options, as `nest build`
// (nest-cli.json), so an app built in a test describes its DTOs as completely as the server.
const { readFileSync } = require('node:fs');
const { resolve } = require('node:path');
const plugin = require('@nestjs/swagger/plugin');

const nestCli = JSON.parse(readFileSync(resolve(__dirname, '../../nest-cli.json'), 'utf8'));
const { options } = nestCli.compilerOptions.plugins.find((p) => p.name === '@nestjs/swagger');

module.exports = {
  name: 'nestjs-swagger-transformer',
  version: 1,
  factory: (compiler) => plugin.before(options, compiler.program),
};
