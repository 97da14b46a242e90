/**
 * Upstream keys kept in a file (`apiKey: { file: path }`, also in `apiKeys`): the file holds the key
 * (surrounding white space, such as the final newline, is ignored); a relative path is taken from the
 * working directory. At start-up a file that is missing, unreadable or empty is a config error naming
 * the path. The running service re-reads the file when it changes (providers/shared/api-key-source.ts).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError } from './config-error.ts';

/** The key in a secret file's text, or undefined when there is none (empty or only white space). */
export function keyInFileText(text: string): string | undefined {
  const key = text.trim();
  return key === '' ? undefined : key;
}

/** The absolute path of a secret given as `{ file }`, or undefined for the other forms. */
export function secretFilePath(secret: unknown): string | undefined {
  if (typeof secret !== 'object' || secret === null || !('file' in secret)) return undefined;
  return resolve(String((secret as { file: unknown }).file));
}

/** Reads the key of `{ file }` at start-up; `where` names the setting in the error. */
export function readSecretFile(path: string, where: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const problem =
      code === 'ENOENT' ? 'which does not exist' : code === 'EISDIR' ? 'which is a directory' : `which cannot be read (${code ?? 'error'})`;
    throw new ConfigError(`${where} names the file ${path}, ${problem}. Write the key into it or change the path.`);
  }
  const key = keyInFileText(text);
  if (key === undefined)
    throw new ConfigError(`${where} names the file ${path}, which is empty. Write the key into it or change the path.`);
  return key;
}
