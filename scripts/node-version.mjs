// The Node the project runs on (record 044): the version it needs, and one sentence
// for a Node that is older. Plain JavaScript on purpose: it runs on the old Node too.
export const NEEDED = [22, 22];

/** "22.22" */
export const NEEDED_TEXT = NEEDED.join(".");

/** Whether `version` ("20.20.2") is at least the version the project needs. */
export function supported(version) {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  return major > NEEDED[0] || (major === NEEDED[0] && minor >= NEEDED[1]);
}

/** The sentence for a Node that is too old. */
export function tooOldMessage(version) {
  return (
    `Coinkeep needs Node ${NEEDED_TEXT} or newer and this is Node ${version}: ` +
    "run `npm install` (it brings Node 24 into node_modules/.bin) and start it with `npm start`, " +
    "which uses that Node."
  );
}

/** Exits with the sentence when this process's Node is too old. */
export function checkNode(version = process.versions.node) {
  if (supported(version)) return;
  console.error(tooOldMessage(version));
  process.exit(1);
}
