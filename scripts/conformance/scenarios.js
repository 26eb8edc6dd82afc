// Lists the server scenarios of a requirement set for scripts/conformance.sh:
// the required ones and the not-scored ones run on the server leg (the
// tasks extension, pending scenarios), one per line.
// Usage: node scenarios.js REQUIREMENTS_YAML
'use strict';
const fs = require('fs');
const path = require('path');
// The suite's own YAML parser, installed beside it.
const yaml = require(path.resolve(path.dirname(process.argv[2]), '..', '..', '..', 'yaml'));
const set = yaml.parse(fs.readFileSync(process.argv[2], 'utf8'));
const scenarios = [...(set.server || [])];
for (const entry of set.not_scored || []) {
  if (entry.leg === 'server' && !scenarios.includes(entry.scenario)) scenarios.push(entry.scenario);
}
console.log(scenarios.join('\n'));
