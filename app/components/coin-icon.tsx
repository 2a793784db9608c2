/** A coin's icon, served from public/coins (ours, no third-party hosts). */
export function CoinIcon({ src, size = 32 }: { src: string; size?: number }) {
  return <img className="coin-icon" src={src} width={size} height={size} alt="" />;
}
