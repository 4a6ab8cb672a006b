import { withoutVisualFiles } from '../../src/llm/visual-files';
import type { ModelMessage } from '../../src/llm/model-provider';

const load = () => Promise.resolve(null);

describe('the conversation for a model known to take no images or PDFs', () => {
  it("puts a note in place of a prompt's image and PDF, and keeps its text and text files", () => {
    const prompt: ModelMessage = {
      role: 'user',
      content: 'What is this?',
      parts: [
        { type: 'text', text: 'What is this?' },
        { type: 'file', name: 'a.png', mediaType: 'image/png', width: 2, height: 2, load },
        { type: 'file', name: 'r.pdf', mediaType: 'application/pdf', load },
        { type: 'file', name: 'n.txt', mediaType: 'text/plain', load },
      ],
    };
    const [out] = withoutVisualFiles([prompt]);
    expect(out).toEqual({
      role: 'user',
      content: 'What is this?',
      parts: [
        { type: 'text', text: 'What is this?' },
        {
          type: 'text',
          text: '[The file "a.png" (image/png) is not shown: this model does not take images or PDFs.]',
        },
        {
          type: 'text',
          text: '[The file "r.pdf" (application/pdf) is not shown: this model does not take images or PDFs.]',
        },
        { type: 'file', name: 'n.txt', mediaType: 'text/plain', load },
      ],
    });
  });
});
