/**
 * The OpenAI files wire format as one value (services/files/file-requests.ts `FilesWire`), which the
 * route hands to the files use cases.
 */
import { checkUploadIsMultipart, decodeFileListQuery, decodeSignedLinkQuery } from './decode-request.ts';
import { encodeDeletedFile, encodeFileList, toFileObject } from './file-object.ts';

export const openAIFilesWire = {
  checkUploadIsMultipart,
  decodeListQuery: decodeFileListQuery,
  decodeSignedLinkQuery,
  encodeFile: toFileObject,
  encodeList: encodeFileList,
  encodeDeleted: encodeDeletedFile,
};
