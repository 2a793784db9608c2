// Deposit addresses as QR codes, drawn on the server as one SVG path (so the
// code shows without scripts and no QR library reaches the browser).
import QRCode from "qrcode";

/** A QR code as an SVG path over a square of `size` modules (the 4-module quiet zone included). */
export interface QrSvg {
  size: number;
  path: string;
}

const QUIET = 4;
const cache = new Map<string, QrSvg>();
const CACHE_MAX = 1000;

/**
 * The QR code of `text` (error correction M): each row's runs of dark modules
 * as rectangles. Addresses are public and few, so the last thousand are kept.
 */
export function qrSvg(text: string, opts: { secret?: boolean } = {}): QrSvg {
  const kept = opts.secret ? undefined : cache.get(text);
  if (kept) return kept;
  const { modules } = QRCode.create(text, { errorCorrectionLevel: "M" });
  const n = modules.size;
  let path = "";
  for (let y = 0; y < n; y++) {
    let x = 0;
    while (x < n) {
      if (!modules.get(y, x)) {
        x++;
        continue;
      }
      let run = 1;
      while (x + run < n && modules.get(y, x + run)) run++;
      path += `M${x + QUIET} ${y + QUIET}h${run}v1h-${run}z`;
      x += run;
    }
  }
  const drawn = { size: n + 2 * QUIET, path };
  // A secret (an authenticator's enrolment URI) is never kept.
  if (opts.secret) return drawn;
  if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value ?? "");
  cache.set(text, drawn);
  return drawn;
}
