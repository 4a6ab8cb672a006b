import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AppConfig } from '../../src/config/app-config';
import { ReadFileTool } from '../../src/tools/builtin/read-file.tool';
import { png, pdf } from '../support/attachments';
import {
  makeWorkspace,
  testConfig,
  toolContext,
  toolErrorOf,
  type TempWorkspace,
} from './support/tool-fixtures';

/** read_file of images and PDFs ("Attachments"): told by their bytes, bounded by FILE_MAX_BYTES. */
describe('read_file of an image or a PDF', () => {
  const tool = new ReadFileTool();
  let ws: TempWorkspace;
  let config: AppConfig;
  const PNG = png(4, 5);
  const BIG_PDF = pdf('x'.repeat(2000));

  beforeAll(async () => {
    ws = await makeWorkspace();
    config = testConfig(ws.root, { fileMaxBytes: 1024 });
    await writeFile(join(ws.root, 'photo.txt'), PNG);
    await writeFile(join(ws.root, 'big.pdf'), BIG_PDF);
    // A PNG's signature and header of a 0×0 image: nothing an image decoder can show.
    await writeFile(join(ws.root, 'broken.png'), Buffer.concat([PNG.subarray(0, 16), Buffer.alloc(64, 0)]));
  });
  afterAll(() => ws.cleanup());

  it('returns an image named like text as an image, with its pixels, for the model to see', async () => {
    const result = await tool.execute({ path: 'photo.txt' }, toolContext(config));
    expect(result.content).toBe(`photo.txt: image (image/png, ${PNG.length} bytes), 4×5 pixels: attached.`);
    expect(result.attachment).toEqual({
      name: 'photo.txt',
      mediaType: 'image/png',
      bytes: PNG,
      width: 4,
      height: 5,
    });
  });

  it('refuses a PDF larger than FILE_MAX_BYTES with SIZE_LIMIT, and attaches nothing', async () => {
    const message = await toolErrorOf(tool.execute({ path: 'big.pdf' }, toolContext(config)), 'SIZE_LIMIT');
    expect(message).toContain('FILE_MAX_BYTES');
    expect(message).toContain(`${BIG_PDF.length} bytes`);
  });

  it('says an image that does not decode is not shown; a model known to take no images gets a note', async () => {
    const broken = await tool.execute({ path: 'broken.png' }, toolContext(config));
    expect(broken.content).toMatch(/^broken\.png: image \(image\/png, 80 bytes\): its bytes do not decode/);
    expect(broken.attachment).toBeUndefined();
    const blind = await tool.execute(
      { path: 'photo.txt' },
      { ...toolContext(config), modelTakesFiles: false },
    );
    expect(blind.content).toMatch(/This model does not take images or PDFs/);
    expect(blind.attachment).toBeUndefined();
  });
});
