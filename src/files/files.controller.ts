import type { MultipartFile } from '@fastify/multipart';
import {
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Post,
  Query,
  Req,
  Res,
  StreamableFile,
} from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { EndUser } from '../auth/end-user';
import { Owner } from '../auth/owner.decorator';
import { DomainError, ErrorCode } from '../common/domain-error';
import { ApiErrors, ERROR_RESPONSE_REF } from '../http/api-errors.decorator';
import { rawUpload } from '../http/raw-upload';
import { FileIdPipe } from '../http/uuid-or-404.pipe';
import { FilePageResponse, FileResponse } from './dto/file.response';
import { ListFilesQuery } from './dto/list-files.query';
import { UploadFileQuery } from './dto/upload-file.query';
import { bareMediaType, IMAGE_TYPES } from './file-bytes';
import { contentDisposition } from './file-name';
import { fileView } from './file.presenter';
import { Files, type IncomingFile } from './files.service';

const ERROR = { 'application/json': { schema: { $ref: ERROR_RESPONSE_REF } } };

@ApiTags('files')
@Controller('v1/files')
export class FilesController {
  constructor(private readonly files: Files) {}

  @Post()
  @ApiOperation({
    summary: 'Upload a file',
    description:
      'The file as the body, with its media type as Content-Type (`?name=` its name), or as multipart/form-data with one part `file`. Its type is judged by its bytes.',
  })
  @ApiConsumes(
    'application/octet-stream',
    'image/png',
    'image/jpeg',
    'image/gif',
    'image/webp',
    'application/pdf',
    'text/plain',
    'multipart/form-data',
  )
  @ApiBody({ schema: { type: 'string', format: 'binary' } })
  @ApiCreatedResponse({ type: FileResponse })
  @ApiResponse({ status: 413, description: 'The file is larger than FILE_MAX_BYTES', content: ERROR })
  @ApiResponse({ status: 415, description: 'Not a type files may have', content: ERROR })
  @ApiErrors(400)
  async upload(
    @Owner() owner: string,
    @EndUser() endUser: string | null,
    @Req() request: FastifyRequest,
    @Query() query: UploadFileQuery,
  ): Promise<FileResponse> {
    const incoming = await incomingFile(request, query.name ?? null);
    return fileView(await this.files.upload({ owner, endUser }, incoming));
  }

  @Get()
  @ApiOperation({ summary: "The caller's files, newest first" })
  @ApiOkResponse({ type: FilePageResponse })
  @ApiErrors(400)
  async list(
    @Owner() owner: string,
    @EndUser() endUser: string | null,
    @Query() query: ListFilesQuery,
  ): Promise<FilePageResponse> {
    const page = await this.files.list({ owner, endUser }, query.limit ?? 20, query.cursor);
    return { data: page.data.map(fileView), nextCursor: page.nextCursor };
  }

  @Get(':id')
  @ApiOperation({ summary: "A file's bytes, with its type" })
  @ApiProduces('application/octet-stream')
  @ApiOkResponse({ schema: { type: 'string', format: 'binary' }, description: 'The bytes' })
  @ApiErrors(404)
  async bytes(
    @Owner() owner: string,
    @EndUser() endUser: string | null,
    @Param('id', FileIdPipe) id: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<StreamableFile> {
    const { file, stream } = await this.files.open({ owner, endUser }, id);
    const image = IMAGE_TYPES.has(file.mediaType);
    const text = !image && file.mediaType !== 'application/pdf';
    reply.header('X-Content-Type-Options', 'nosniff');
    return new StreamableFile(stream, {
      type: text ? `${file.mediaType}; charset=utf-8` : file.mediaType,
      length: file.size,
      disposition: contentDisposition(image ? 'inline' : 'attachment', file.name),
    });
  }

  @Get(':id/meta')
  @ApiOperation({ summary: "A file's metadata" })
  @ApiOkResponse({ type: FileResponse })
  @ApiErrors(404)
  async meta(
    @Owner() owner: string,
    @EndUser() endUser: string | null,
    @Param('id', FileIdPipe) id: string,
  ): Promise<FileResponse> {
    return fileView(await this.files.meta({ owner, endUser }, id));
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a file (its bytes go with the last file that holds them)' })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiErrors(404)
  async delete(
    @Owner() owner: string,
    @EndUser() endUser: string | null,
    @Param('id', FileIdPipe) id: string,
  ): Promise<void> {
    await this.files.delete({ owner, endUser }, id);
  }
}

/** The upload in a request: a raw body, or the one part `file` of a multipart body. */
async function incomingFile(request: FastifyRequest, name: string | null): Promise<IncomingFile> {
  const raw = rawUpload(request);
  if (raw !== null) {
    if (raw.body === undefined) throw invalid('The body is the file: it is missing');
    return { chunks: raw.body, declaredType: raw.declaredType, name };
  }
  let part: MultipartFile | undefined;
  try {
    part = await request.file();
  } catch (error) {
    throw invalid(
      `The multipart body does not parse: ${error instanceof Error ? error.message.slice(0, 200) : ''}`,
    );
  }
  if (part === undefined || part.fieldname !== 'file') {
    part?.file.resume();
    throw invalid('A multipart body must have one part named file');
  }
  return {
    chunks: part.file,
    declaredType: bareMediaType(part.mimetype),
    name: name ?? (part.filename || null),
  };
}

function invalid(message: string): DomainError {
  return new DomainError(ErrorCode.InvalidRequest, message);
}
