/**
 * A 12-word phrase, read-only, numbered, in a grid (2 columns on small
 * screens, 4 on wide ones). Used on the create-wallet warning screen and the
 * security reveal: the only two places the phrase reaches a page. The list's own
 * numbers are the only ones in the markup (without CSS it reads "1. force", not
 * "1. 1.force"); the stylesheet draws them in the grid with a counter.
 */
export function PhraseGrid({ words, label = "Your 12-word phrase" }: { words: string[]; label?: string }) {
  return (
    <ol className="word-grid" aria-label={label}>
      {words.map((word, i) => (
        <li key={i}>
          <span className="word">{word}</span>
        </li>
      ))}
    </ol>
  );
}
