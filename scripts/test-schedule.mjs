// The order in which scripts/run-tests.mjs hands its files to Node's runner, and the groups of files
// that share a process (scripts/test-groups.mjs).
//
// Each file (or group) is estimated by the committed list scripts/test-durations.json (the wall time of
// its process; refresh it with the whole suite, `npm test -- --timings=scripts/test-durations.json`, on a
// quiet machine); a file the list does not know counts as its median file, so neither a new long file
// ends the run alone nor new short ones hold the long poles back; a group counts as its own row
// (`group NAME`) or, without one, as the sum of its files. The run has two pools: CPU slots and waiting
// slots (for the WAITING files). Each pool is filled longest first; the files are handed over in the
// order in which they would start in that plan (ties longest first, then by name), because Node's runner
// starts the next file of its one queue whenever any process ends.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { groupOf, WAITING } from './test-groups.mjs';

const DURATIONS = fileURLToPath(new URL('test-durations.json', import.meta.url));
const projectPath = (file) => relative(process.cwd(), file).split('\\').join('/');

/**
 * Files outside every group run alone; the files of a group (two or more) as one generated module in
 * `directory` that imports them in turn (by name); a group of one file runs as that file.
 */
export function unitsOf(files, directory) {
  const groups = new Map();
  const units = [];
  for (const file of files) {
    const group = groupOf(projectPath(file));
    if (group === undefined) units.push({ file, waiting: WAITING.includes(projectPath(file)) });
    else groups.set(group, [...(groups.get(group) ?? []), file]);
  }
  for (const [group, members] of groups) {
    if (members.length === 1) {
      units.push({ file: members[0], waiting: false });
      continue;
    }
    members.sort();
    const entry = join(directory, `${group}.group.mjs`);
    writeFileSync(entry, members.map((file) => `await import(${JSON.stringify(pathToFileURL(file).href)});\n`).join(''));
    units.push({ file: entry, group, files: members, waiting: false });
  }
  return units;
}

/** The units' files in the order to hand them to the runner (see the header). */
export function order(units, { cpuSlots, waitingSlots }) {
  const seconds = new Map();
  if (existsSync(DURATIONS)) {
    for (const row of JSON.parse(readFileSync(DURATIONS, 'utf8'))) seconds.set(row.file, row.processWallSeconds ?? row.testWallSeconds);
  }
  const known = [...seconds.values()].sort((a, b) => a - b);
  const median = known.length === 0 ? 0 : known[Math.floor(known.length / 2)];
  const fileEstimate = (file) => seconds.get(projectPath(file)) ?? median;
  const estimate = (unit) =>
    unit.group === undefined
      ? fileEstimate(unit.file)
      : (seconds.get(`group ${unit.group}`) ?? unit.files.reduce((sum, file) => sum + fileEstimate(file), 0));
  const longestFirst = [...units]
    .map((unit) => ({ ...unit, seconds: estimate(unit) }))
    .sort((a, b) => b.seconds - a.seconds || a.file.localeCompare(b.file));
  // Without waiting slots the waiting files take CPU slots like the others.
  const pools = waitingSlots > 0 ? [Array(cpuSlots).fill(0), Array(waitingSlots).fill(0)] : [Array(cpuSlots).fill(0)];
  for (const unit of longestFirst) {
    const pool = pools[unit.waiting && waitingSlots > 0 ? 1 : 0];
    const slot = pool.indexOf(Math.min(...pool));
    unit.start = pool[slot];
    pool[slot] += unit.seconds;
  }
  return longestFirst.sort((a, b) => a.start - b.start || b.seconds - a.seconds || a.file.localeCompare(b.file)).map((unit) => unit.file);
}
