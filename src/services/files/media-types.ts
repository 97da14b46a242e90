/** The content type a stored file is served with: a short list served as declared, else by extension, else octet-stream. */

/** Content types served as given; anything else is served as application/octet-stream. */
const SERVABLE_MEDIA_TYPES = new Set([
  'application/jsonl',
  'application/json',
  'text/plain',
  'text/csv',
  'application/pdf',
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
]);
export const MEDIA_TYPE_BY_EXTENSION: Record<string, string> = {
  jsonl: 'application/jsonl',
  json: 'application/json',
  txt: 'text/plain',
  csv: 'text/csv',
  pdf: 'application/pdf',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
};

/** The content type a stored file is served with, from its purpose, name and declared type. */
export function mediaTypeFor(purpose: string, filename: string, declared: string): string {
  if (purpose === 'batch' || purpose === 'batch_output') return 'application/jsonl';
  const normalized = declared.split(';')[0]!.trim().toLowerCase();
  if (SERVABLE_MEDIA_TYPES.has(normalized)) return normalized;
  const extension = /\.([A-Za-z0-9]+)$/.exec(filename)?.[1]?.toLowerCase();
  return (extension === undefined ? undefined : MEDIA_TYPE_BY_EXTENSION[extension]) ?? 'application/octet-stream';
}
