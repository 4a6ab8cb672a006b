import { ApiProperty } from '@nestjs/swagger';

/** An uploaded file's metadata (built by file.presenter.ts). */
export class FileResponse {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty()
  name!: string;

  @ApiProperty({
    description:
      'What its bytes are: image/png, image/jpeg, image/gif, image/webp, application/pdf, text/*, application/json',
  })
  mediaType!: string;

  @ApiProperty({ type: 'integer', description: 'Bytes' })
  size!: number;

  @ApiProperty({ description: 'sha256 of the bytes, lowercase hex', pattern: '^[0-9a-f]{64}$' })
  sha256!: string;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export class FilePageResponse {
  @ApiProperty({ type: [FileResponse] })
  data!: FileResponse[];

  @ApiProperty({ type: String, nullable: true })
  nextCursor!: string | null;
}
