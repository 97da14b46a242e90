// Preloaded first into each test process by run-tests.mjs: a file that uses CPU (every file but the
// WAITING ones of scripts/test-groups.mjs) takes one of the run's CPU slots before it imports anything,
// and holds it until it exits. The runner starts more processes than there are CPU slots (the CPU slots
// plus the waiting slots), so files that mostly wait (outages, timers, slow clients) run beside the
// CPU-bound ones instead of holding one of their slots; a CPU-bound file started while both slots are
// held waits here (a sleeping process, before its imports) until one is free.
// A slot is a file `slot-N` in SWITCHYARD_TEST_CPU_SLOTS_DIR created exclusively with the holder's pid;
// one left by a process that died without its exit handler (killed by a timeout) is taken over.
import { openSync, readFileSync, unlinkSync, writeSync, closeSync } from 'node:fs';
import { join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { WAITING } from './test-groups.mjs';

const directory = process.env.SWITCHYARD_TEST_CPU_SLOTS_DIR;
const slots = Number(process.env.SWITCHYARD_TEST_CPU_SLOTS ?? 0);
const file = process.argv[1];

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** Takes a free slot (or one whose holder is gone) and returns its path, or undefined when all are held. */
function take() {
  for (let index = 0; index < slots; index += 1) {
    const path = join(directory, `slot-${index}`);
    try {
      const descriptor = openSync(path, 'wx');
      writeSync(descriptor, String(process.pid));
      closeSync(descriptor);
      return path;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      let holder;
      try {
        holder = Number(readFileSync(path, 'utf8'));
      } catch {
        continue; // released meanwhile: the next round takes it
      }
      // An empty file is one being written this instant; a pid that is gone left its slot behind.
      if (holder > 0 && !alive(holder)) {
        try {
          unlinkSync(path);
        } catch {
          // another waiter removed it first
        }
      }
    }
  }
  return undefined;
}

// Only the test file's own process (a `.test.ts` file or a group's module): the processes it starts with
// its execArgv (node-llama-cpp's binary check, forked helpers) inherit this preload and must not queue
// for a slot their parent holds.
const testProcess = file !== undefined && (file.endsWith('.test.ts') || file.endsWith('.group.mjs'));
if (directory && slots > 0 && testProcess && !WAITING.includes(relative(process.cwd(), file).split('\\').join('/'))) {
  const started = performance.now();
  let slot = take();
  // Each try is a few file-system calls; 25 ms between tries keeps a waiting process asleep.
  while (slot === undefined) {
    await sleep(25);
    slot = take();
  }
  process.env.SWITCHYARD_TEST_SLOT_WAIT_MS = String(Math.round(performance.now() - started));
  process.on('exit', () => {
    try {
      if (readFileSync(slot, 'utf8') === String(process.pid)) unlinkSync(slot);
    } catch {
      // already taken over
    }
  });
}
