/** The `filesStore` setting (FILES_STORE) resolved: local, the service's Postgres, or an S3 bucket and its AWS settings. */
import { resolve } from 'node:path';
import { ConfigError } from './config-error.ts';

/** Where file bytes live (the resolved `filesStore` setting). */
export type FilesStoreConfig =
  | { readonly kind: 'local'; /** Absolute path, `<dataDir>/files`. */ readonly directory: string }
  | { readonly kind: 'postgres'; /** The service's own Postgres database. */ readonly databaseUrl: string }
  | {
      readonly kind: 's3';
      readonly bucket: string;
      /** Key prefix without surrounding slashes; '' for the bucket root. */
      readonly prefix: string;
      /** AWS_ENDPOINT_URL(_S3): an S3-compatible server; path-style addressing is used with it. */
      readonly endpoint: string | undefined;
      readonly region: string;
      /** From AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY; undefined leaves the SDK's own chain (instance roles...). */
      readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string; readonly sessionToken?: string } | undefined;
    };

/** S3 bucket naming rules: 3-63 lower-case letters, digits, dots and dashes, starting and ending alphanumeric. */
const S3_BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** `local`, `postgres` or `s3://bucket[/prefix]`, checked against the database and the AWS variables. */
export function resolveFilesStore(setting: string, dataDir: string, databaseUrl: string, env: NodeJS.ProcessEnv): FilesStoreConfig {
  const usage = 'Use filesStore (FILES_STORE) local, postgres or s3://bucket[/prefix].';
  if (setting === 'local') return { kind: 'local', directory: resolve(dataDir, 'files') };
  if (setting === 'postgres') {
    if (!/^postgres(ql)?:\/\//.test(databaseUrl)) {
      throw new ConfigError(
        'filesStore (FILES_STORE) is "postgres" but the database is SQLite. Set DATABASE_URL=postgres://... or use FILES_STORE=local.',
      );
    }
    return { kind: 'postgres', databaseUrl };
  }
  if (!setting.startsWith('s3://')) throw new ConfigError(`filesStore (FILES_STORE) "${setting}" is not supported. ${usage}`);
  const [bucket = '', ...rest] = setting.slice('s3://'.length).split('/');
  if (!S3_BUCKET_NAME.test(bucket)) {
    throw new ConfigError(
      `filesStore (FILES_STORE) "${setting}": "${bucket}" is not a valid S3 bucket name (3-63 lower-case letters, digits, dots and dashes). ${usage}`,
    );
  }
  const prefix = rest.filter((segment) => segment !== '').join('/');
  const endpoint = env['AWS_ENDPOINT_URL_S3'] || env['AWS_ENDPOINT_URL'] || undefined;
  if (endpoint !== undefined && !/^https?:\/\/[^/]/.test(endpoint)) {
    throw new ConfigError(`AWS_ENDPOINT_URL "${endpoint}" must be an http:// or https:// URL, e.g. http://127.0.0.1:9000.`);
  }
  const accessKeyId = env['AWS_ACCESS_KEY_ID'] || undefined;
  const secretAccessKey = env['AWS_SECRET_ACCESS_KEY'] || undefined;
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new ConfigError("Set both AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or neither, to use the AWS SDK's own credential chain).");
  }
  const sessionToken = env['AWS_SESSION_TOKEN'] || undefined;
  return {
    kind: 's3',
    bucket,
    prefix,
    endpoint,
    region: env['AWS_REGION'] || env['AWS_DEFAULT_REGION'] || 'us-east-1',
    credentials:
      accessKeyId === undefined || secretAccessKey === undefined
        ? undefined
        : { accessKeyId, secretAccessKey, ...(sessionToken === undefined ? {} : { sessionToken }) },
  };
}
