/**
 * The environment file a systemd unit reads (`EnvironmentFile=`, README "Production install"), read
 * by the CLI too (`--environment-file` or SWITCHYARD_ENV_FILE), so that `switchyard keys list` run in the
 * install folder talks to the service's database rather than a new one in `./data`. Its values go over
 * the same names set otherwise, as systemd puts `EnvironmentFile=` over `Environment=`. Parsed with
 * Node's own `util.parseEnv` (KEY=VALUE lines, `#` comments, quoted values). The flag is not named
 * `--env-file`: Node 22 takes that one for itself wherever it stands on the command line.
 */
import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { ConfigError } from './config-error.ts';

/** `env` with the file's values over it; `env` itself when no file is named. */
export function withEnvironmentFile(env: NodeJS.ProcessEnv, path: string | undefined): NodeJS.ProcessEnv {
  if (path === undefined || path === '') return env;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(
      `Cannot read the environment file ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)}): run the command as a user who may read it (the service's), or name another with --environment-file.`,
    );
  }
  return { ...env, ...parseEnv(text) };
}
