// The wallet page's QR code (issue 15): the path drawn on the server, read
// back by a QR decoder, is the deposit address, for every coin's format.
import jsQR from "jsqr";
import { describe, expect, test } from "vitest";
import { qrSvg } from "../../app/lib/qr.server";

/** Paints the path's rectangles (only the M x y h w v1 h-w z form qrSvg writes) at `scale` px per module. */
function raster(size: number, path: string, scale = 4) {
  const width = size * scale;
  const pixels = new Uint8ClampedArray(width * width * 4).fill(255);
  for (const match of path.matchAll(/M(\d+) (\d+)h(\d+)v1h-\3z/gu)) {
    const [x, y, run] = [Number(match[1]), Number(match[2]), Number(match[3])];
    for (let py = y * scale; py < (y + 1) * scale; py++) {
      for (let px = x * scale; px < (x + run) * scale; px++) {
        const at = (py * width + px) * 4;
        pixels[at] = pixels[at + 1] = pixels[at + 2] = 0;
      }
    }
  }
  return { pixels, width };
}

describe("deposit address QR codes", () => {
  // Trust Wallet wallet-core's index-0 addresses of each coin (shared/COINS.md).
  const addresses = [
    "bc1quvuarfksewfeuevuc6tn0kfyptgjvwsvrprk9d",
    "0x8f348F300873Fd5DA36950B2aC75a26584584feE",
    "DJRFZNg8jkUtjcpo2zJd92FUAzwRjitw6f",
    "TQ5NMqJjhpQGK7YJbESKtNCo86PJ89ujio",
    "rPwE3gChNKtZ1mhH3Ko8YFGqKmGRWLWXV3",
    "2bUBiBNZyD29gP1oV6de7nxowMLoDBtopMMTGgMvjG5m",
    "addr1qyr8jjfnypp95eq74aqzn7ss687ehxclgj7mu6gratmg3mul2040vt35dypp042awzsjk5xm3zr3zm5qh7454uwdv08s84ray2",
  ];
  for (const address of addresses) {
    test(`decodes back to ${address.slice(0, 12)}…`, () => {
      const { size, path } = qrSvg(address);
      const { pixels, width } = raster(size, path);
      expect(jsQR(pixels, width, width)?.data).toBe(address);
    });
  }

  test("the same address is drawn once and kept", () => {
    expect(qrSvg(addresses[0] ?? "")).toBe(qrSvg(addresses[0] ?? ""));
  });
});
