/**
 * The Node.js versions Switchyard runs on, and the one-sentence answers for a start on another one:
 * an older Node is refused before anything runs (package.json `engines` only warns at install), and a
 * native module built for another Node (better-sqlite3 after switching Node versions) is named with
 * its fix instead of a raw stack.
 */

/** The oldest supported Node.js; package.json `engines.node` says the same (a test checks). */
export const MINIMUM_NODE_VERSION = '22.12.0';

function parts(version: string): number[] {
  return version
    .replace(/^v/, '')
    .split('.')
    .map((part) => Number.parseInt(part, 10) || 0);
}

/** The refusal for an unsupported Node.js version, or undefined when `version` is supported. */
export function unsupportedNodeSentence(version: string = process.version): string | undefined {
  const [major = 0, minor = 0, patch = 0] = parts(version);
  const [needMajor = 0, needMinor = 0, needPatch = 0] = parts(MINIMUM_NODE_VERSION);
  const supported = major !== needMajor ? major > needMajor : minor !== needMinor ? minor > needMinor : patch >= needPatch;
  if (supported) return undefined;
  return `Switchyard needs Node.js ${MINIMUM_NODE_VERSION} or later and this is Node.js ${version}: install Node.js 22 LTS (then run \`npm rebuild better-sqlite3\` once in the install folder) and start again.`;
}

/** The one sentence for a native module built for another Node.js version, or undefined for any other error. */
export function nativeModuleMismatchSentence(error: unknown, version: string = process.version): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof message !== 'string' || !/NODE_MODULE_VERSION \d+/.test(message)) return undefined;
  if (code !== undefined && code !== 'ERR_DLOPEN_FAILED') return undefined;
  const module = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(message)?.[1] ?? 'better-sqlite3';
  const versions = /NODE_MODULE_VERSION (\d+)\..*?NODE_MODULE_VERSION (\d+)/s.exec(message);
  const built = versions === null ? '' : ` (built for NODE_MODULE_VERSION ${versions[1]}, Node.js ${version} needs ${versions[2]})`;
  return `${module} was built for another Node.js version${built}: run \`npm rebuild ${module}\` in the install folder with this Node.js, then start again.`;
}
