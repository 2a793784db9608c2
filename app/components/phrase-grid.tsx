/**
 * A 12-word phrase, read-only, numbered, in a grid (2 columns on small
 * screens, 4 on wide ones). Used on the create-wallet warning screen and the
 * security reveal: the only two places the phrase reaches a page.
 */
export function PhraseGrid({ words, label = "Your 12-word phrase" }: { words: string[]; label?: string }) {
  return (
    <ol className="word-grid" aria-label={label}>
      {words.map((word, i) => (
        <li key={i}>
          <span className="word-index" aria-hidden="true">
            {i + 1}.
          </span>
          <span className="word">{word}</span>
        </li>
      ))}
    </ol>
  );
}
