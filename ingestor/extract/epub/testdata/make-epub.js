// Generates the EPUB fixtures of ingestor/extract/epub/testdata with
// epub-gen-memory (npm). Run: node make-epub.js OUTDIR
const fs = require('fs');
const path = require('path');
const epub = require('epub-gen-memory').default;

const out = process.argv[2] || '.';

const chapters = [
  {
    title: 'The Harbour',
    content: '<p>The ship came in at dawn, and the harbour master counted the crates.</p>' +
      '<h2>The Crates</h2><p>There were forty crates of tea and one of books.</p>' +
      '<ul><li>tea from Assam</li><li>books in Latin</li></ul>',
  },
  {
    title: 'The Letter',
    content: '<p>Inside the crate of books lay a letter with the word epubchaptermarker on it.</p>' +
      '<table><tr><th>Sender</th><th>Town</th></tr><tr><td>Mara</td><td>Lisbon</td></tr></table>' +
      '<pre>P.S. burn this</pre>',
  },
  {
    title: 'The Answer',
    content: '<h2>Reply</h2><p>She wrote back the same night, and the answer was short.</p>',
  },
];

async function main() {
  // EPUB 3: a navigation document, chapter titles written into the chapters.
  const v3 = await epub({
    title: 'The Harbour Letters',
    author: ['Ann Lee', 'Bo Chen'],
    publisher: 'Strata tests',
    lang: 'en',
    date: '2024-03-01',
    version: 3,
  }, chapters);
  fs.writeFileSync(path.join(out, 'harbour-epub3.epub'), v3);

  // EPUB 2: an NCX only, and chapters without their titles, which then
  // come from the NCX.
  const v2 = await epub({
    title: 'The Harbour Letters, Plain',
    author: 'Ann Lee',
    lang: 'de',
    date: '2023-11-05',
    version: 2,
    prependChapterTitles: false,
  }, chapters);
  fs.writeFileSync(path.join(out, 'harbour-epub2.epub'), v2);
}

main().catch((err) => { console.error(err); process.exit(1); });
