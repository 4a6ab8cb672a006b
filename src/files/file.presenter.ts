import type { FileRow } from '../store/file-store.service';
import type { FileResponse } from './dto/file.response';

export function fileView(file: FileRow): FileResponse {
  return {
    id: file.id,
    name: file.name,
    mediaType: file.mediaType,
    size: file.size,
    sha256: file.sha256,
    createdAt: file.createdAt.toISOString(),
  };
}
