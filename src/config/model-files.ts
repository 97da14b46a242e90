/**
 * The GGUF files of llama-cpp models, checked when the service starts (not when the config is read, so
 * the CLI works on a machine without the weights): a path that does not exist, is not a readable file
 * or does not start with the GGUF magic is a config error naming the model and the setting, instead of
 * a 500 on the first request.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError } from './config-error.ts';
import type { ModelConfig, ProviderConfig } from './schema.ts';

/** Every GGUF file starts with these four bytes (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md). */
const GGUF_MAGIC = 'GGUF';

interface ModelFileSettings {
  readonly providers: Readonly<Record<string, Pick<ProviderConfig, 'kind'>>>;
  readonly models: readonly ModelConfig[];
}

/** What is wrong with the file at `path`, or undefined when it is a readable GGUF file. */
function fileProblem(path: string): string | undefined {
  let descriptor: number | undefined;
  try {
    if (!statSync(path).isFile()) return 'is not a file';
    descriptor = openSync(path, 'r');
    const magic = Buffer.alloc(4);
    readSync(descriptor, magic, 0, 4, 0);
    return magic.toString('latin1') === GGUF_MAGIC ? undefined : 'is not a GGUF file (it does not start with "GGUF")';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? 'does not exist' : `cannot be read (${code ?? String(error)})`;
  } finally {
    if (descriptor !== undefined) closeSync(descriptor);
  }
}

/** Throws a ConfigError for the first llama-cpp model (or deployment) whose GGUF file is not usable. */
export function checkModelFiles(config: ModelFileSettings): void {
  config.models.forEach((model, index) => {
    const targets = model.deployments?.map((deployment, deploymentIndex) => ({
      provider: deployment.provider,
      path: deployment.upstreamModel ?? model.upstreamModel ?? model.id,
      where: `models[${index}].deployments[${deploymentIndex}].upstreamModel`,
    })) ?? [{ provider: model.provider, path: model.upstreamModel ?? model.id, where: `models[${index}].upstreamModel` }];
    for (const target of targets) {
      if (config.providers[target.provider]?.kind !== 'llama-cpp') continue;
      const absolute = resolve(target.path);
      const problem = fileProblem(absolute);
      if (problem !== undefined) {
        throw new ConfigError(
          `${target.where} of the llama-cpp model "${model.id}": the GGUF file ${absolute} ${problem}. Put the model file there or fix the path.`,
        );
      }
    }
  });
}
