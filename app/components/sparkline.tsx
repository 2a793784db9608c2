/** A coin's 7-day line as drawn on the server (app/dashboard.server.ts). */
export interface Sparkline {
  /** The SVG path's d, in a width × height box. */
  d: string;
  /** e.g. "BTC price, last 7 days: down 2.46%". */
  label: string;
  tone: "up" | "down" | "flat";
}

/** The sparkline's box, in CSS pixels. */
export const SPARKLINE_WIDTH = 96;
export const SPARKLINE_HEIGHT = 28;

/** A coin's 7-day prices as an inline SVG line (drawn on the server); its name says the week's change in words. */
export function SparklineCell({ sparkline }: { sparkline: Sparkline | undefined }) {
  if (!sparkline)
    return (
      <>
        <span className="muted" aria-hidden="true">
          —
        </span>
        <span className="visually-hidden">No 7-day prices</span>
      </>
    );
  return (
    <svg
      className={`sparkline change-${sparkline.tone}`}
      role="img"
      aria-label={sparkline.label}
      viewBox={`0 0 ${SPARKLINE_WIDTH} ${SPARKLINE_HEIGHT}`}
      width={SPARKLINE_WIDTH}
      height={SPARKLINE_HEIGHT}
    >
      <path d={sparkline.d} />
    </svg>
  );
}
