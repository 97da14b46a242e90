// Preloaded into each test file's process by run-tests.mjs when timings are asked for: at exit it
// writes the process's CPU time (user + system) and wall time (less any wait for a CPU slot) to SWITCHYARD_TEST_USAGE_DIR, one JSON
// file per test file (a group of files sharing a process, scripts/test-groups.mjs, as `group NAME`), for
// scripts/test-timings.mjs to read.
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { randomUUID } from 'node:crypto';

/** CPU seconds of the child processes the file started and waited for (servers, CLIs), from Linux's /proc. */
function childCpuSeconds() {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    // After the command name: state is field 3, cutime and cstime fields 16 and 17 (clock ticks, 100 a second).
    return Number(((Number(fields[13]) + Number(fields[14])) / 100).toFixed(2));
  } catch {
    return undefined;
  }
}

const directory = process.env.SWITCHYARD_TEST_USAGE_DIR;
const file = process.argv[1];
const key = file?.endsWith('.group.mjs')
  ? `group ${basename(file, '.group.mjs')}`
  : file?.endsWith('.test.ts')
    ? relative(process.cwd(), file)
    : undefined;
if (directory && key !== undefined) {
  process.on('exit', () => {
    const usage = process.resourceUsage();
    const record = {
      file: key,
      cpuSeconds: Number(((usage.userCPUTime + usage.systemCPUTime) / 1e6).toFixed(2)),
      childCpuSeconds: childCpuSeconds(),
      // Less the time it slept waiting for a CPU slot (scripts/test-cpu-slot.mjs) before its imports.
      wallSeconds: Number((process.uptime() - Number(process.env.SWITCHYARD_TEST_SLOT_WAIT_MS ?? 0) / 1000).toFixed(2)),
      ...(process.env.SWITCHYARD_TEST_SLOT_WAIT_MS === undefined
        ? {}
        : { slotWaitSeconds: Number(process.env.SWITCHYARD_TEST_SLOT_WAIT_MS) / 1000 }),
    };
    writeFileSync(join(directory, `${randomUUID()}.json`), JSON.stringify(record));
  });
}
