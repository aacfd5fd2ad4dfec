// Runs the client-parity fixtures against the web client's modules under Node, without
// a browser: `node --experimental-default-type=module Tests/Browser/parity_node.mjs`.
// With `--write-clock` it first rewrites clock.json's `expected` from clock.js (after
// adding a case, say), and with `--write-probe` probe.json's figures from probe.js;
// ClientParityFixtureTests then checks JamClient against them.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const base = pathToFileURL(path.join(root, 'Sources/JamWebClient/Web/js')).href + '/';
const runner = await import(pathToFileURL(path.join(root, 'Tests/Browser/parity_runner.mjs')).href);
const file = (name) => path.join(root, 'Tests/Fixtures/ClientParity', `${name}.json`);
const load = (name) => JSON.parse(fs.readFileSync(file(name), 'utf8'));

if (process.argv.includes('--write-clock')) {
  const clock = load('clock');
  const results = await runner.clockResults(base, clock);
  clock.cases.forEach((c, index) => { c.expected = results[index]; });
  fs.writeFileSync(file('clock'), `${JSON.stringify(clock, null, 1)}\n`);
}
if (process.argv.includes('--write-probe')) {
  const probe = load('probe');
  const results = await runner.probeResults(base, probe);
  probe.cases.forEach((c, index) => Object.assign(c, results[index]));
  fs.writeFileSync(file('probe'), `${JSON.stringify(probe, null, 1)}\n`);
}
let failed = false;
for (const [name, run] of [['timeline', runner.runTimeline], ['correction', runner.runCorrection], ['mirror', runner.runMirror],
  ['clock', runner.runClock], ['defaults', runner.runDefaults], ['credits', runner.runCredits], ['probe', runner.runProbe],
  ['display-names', runner.runDisplayNames], ['join-codes', runner.runJoinCodes], ['device-ids', runner.runDeviceIds],
  ['settings', runner.runSettings], ['error-statuses', runner.runErrorStatuses],
  ['close-failures', runner.runCloseFailures], ['load-retry', runner.runLoadRetry], ['connection-watch', runner.runConnectionWatch]]) {
  const failures = await run(base, load(name));
  console.log(`${name}: ${failures.length ? failures.join('\n') : 'ok'}`);
  failed ||= failures.length > 0;
}
process.exit(failed ? 1 : 0);
