/**
 * Process helpers for fault injection: which binaries exist, the children of a process (read from
 * /proc, Linux only), and freezing or thawing a process with its children (SIGSTOP / SIGCONT), the way
 * a VM pause, a stuck host or a network partition looks to a client.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Whether `command` runs (`<command> --version` exits 0). */
export function hasBinary(command: string): boolean {
  return spawnSync(command, ['--version'], { stdio: 'ignore' }).status === 0;
}

/** Pids of the processes whose parent is `parent`, from /proc/<pid>/stat. */
export function childPids(parent: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so parse after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[1]) === parent) children.push(Number(entry));
  }
  return children;
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

/**
 * SIGSTOPs `pid` first (so it forks nothing new), then each of its children. Returns the pids stopped,
 * for `thaw`.
 */
export function freeze(pid: number): number[] {
  signal(pid, 'SIGSTOP');
  const children = childPids(pid);
  for (const child of children) signal(child, 'SIGSTOP');
  return [pid, ...children];
}

/** SIGCONTs the children first, then the parent (the first pid of `freeze`'s answer). */
export function thaw(pids: number[]): void {
  for (const pid of pids.slice(1)) signal(pid, 'SIGCONT');
  if (pids[0] !== undefined) signal(pids[0], 'SIGCONT');
}
