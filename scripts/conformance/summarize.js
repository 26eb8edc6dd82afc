// Summarises one scenario's checks.json for scripts/conformance.sh.
// Usage: node summarize.js SCENARIO CHECKS_JSON
// Prints one line; exits 1 on any FAILURE or "not testable" check, or none at all.
'use strict';
const fs = require('fs');
const [scenario, file] = process.argv.slice(2);
let checks;
try {
  checks = JSON.parse(fs.readFileSync(file, 'utf8'));
} catch (e) {
  console.log(`${scenario}: FAILED (no readable checks.json: ${e.message})`);
  process.exit(1);
}
const untestable = (c) =>
  /not testable/i.test(c.errorMessage || '') || (c.details && c.details.untestable === true);
const count = (pred) => checks.filter(pred).length;
const failed = checks.filter((c) => c.status === 'FAILURE' || untestable(c));
const passed = count((c) => c.status === 'SUCCESS' && !untestable(c));
const warnings = count((c) => c.status === 'WARNING' && !untestable(c));
const other = checks.length - passed - warnings - failed.length;
const ok = failed.length === 0 && checks.length > 0;
console.log(
  `${scenario}: ${ok ? 'ok' : 'FAILED'} (${passed} passed, ${failed.length} failed or not testable, ` +
    `${warnings} warnings, ${other} skipped/info, ${checks.length} checks)`,
);
for (const c of failed) console.log(`    ${c.id}: ${c.status} ${c.errorMessage || ''}`);
for (const c of checks.filter((c) => c.status === 'WARNING' && !untestable(c)))
  console.log(`    warning ${c.id}: ${c.errorMessage || ''}`);
process.exit(ok ? 0 : 1);
