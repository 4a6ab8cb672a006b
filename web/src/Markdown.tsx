import DOMPurify from 'dompurify';
import { Marked } from 'marked';
import { useMemo } from 'react';

/**
 * Markdown for answers: HTML the model writes is shown as the text it is (escaped), never parsed —
 * so a `<script>` or an `<img onerror>` in an answer is only ever characters on the page.
 */
const markdown = new Marked({
  gfm: true,
  breaks: true,
  renderer: {
    html: ({ text }) => escapeHtml(text),
  },
});

/** Second line of defence: whatever marked makes, nothing that runs, loads, styles or submits stays. */
const FORBID_TAGS = [
  'style',
  'img',
  'svg',
  'math',
  'iframe',
  'form',
  'input',
  'button',
  'textarea',
  'select',
  'video',
  'audio',
  'source',
  'picture',
  'link',
  'meta',
];

/** An answer of the model as Markdown (marked), sanitized (DOMPurify) before it reaches the DOM. */
export function Markdown({ text }: { text: string }) {
  const html = useMemo(
    () => DOMPurify.sanitize(markdown.parse(text, { async: false }), { FORBID_TAGS, FORBID_ATTR: ['style'] }),
    [text],
  );
  return <div className="text markdown" dangerouslySetInnerHTML={{ __html: html }} />;
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
