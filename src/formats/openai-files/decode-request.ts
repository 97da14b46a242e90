/**
 * What the `/v1/files` routes take from the client besides the path: the list query, whether the upload
 * came as multipart/form-data (its parts are read by the file service as they stream in) and the query
 * of a signed content link (checked by the file service, which holds the signing secret).
 */
import { invalidFormat, invalidParameter } from '../../core/service-error.ts';
import { isObject } from '../shared/request-fields.ts';
import { decodeListLimit, optionalQueryText } from '../shared/list-page.ts';

/** The query of `GET /v1/files`: cursor `after`, `limit` 1-10,000 (default 10,000), `order`, `purpose`. */
export interface FileListQuery {
  after?: string;
  limit: number;
  order: 'asc' | 'desc';
  purpose?: string;
}

export function decodeFileListQuery(query: unknown): FileListQuery {
  const values = isObject(query) ? query : {};
  const order = values['order'] ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw invalidParameter('order', "order must be 'asc' or 'desc'.");
  const after = optionalQueryText(values['after']);
  const purpose = optionalQueryText(values['purpose']);
  return {
    limit: decodeListLimit(values['limit'], 10_000, 10_000),
    order,
    ...(after === undefined ? {} : { after }),
    ...(purpose === undefined ? {} : { purpose }),
  };
}

/** `POST /v1/files` takes multipart/form-data only (the parts "file" and "purpose"). */
export function checkUploadIsMultipart(multipart: boolean): void {
  if (!multipart) throw invalidFormat(null, 'Send the upload as multipart/form-data with the parts "file" and "purpose".');
}

/** The query of a signed content link (files/signed-url.ts): `expires` and `signature`, as sent. */
export interface SignedLinkQuery {
  expires: string | undefined;
  signature: string | undefined;
}

export function decodeSignedLinkQuery(query: unknown): SignedLinkQuery {
  const values = isObject(query) ? query : {};
  return { expires: values['expires'] as string | undefined, signature: values['signature'] as string | undefined };
}
