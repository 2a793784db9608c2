// The worker thread that encrypts a backup (server/ops/backup.ts encryptAside): the payload and
// the key come in workerData, the age file goes back as one message.
import { parentPort, workerData } from "node:worker_threads";
import { Encrypter } from "age-encryption";
import type { BackupKey } from "./backup.ts";

const { plain, key } = workerData as { plain: Uint8Array; key: BackupKey };
const encrypter = new Encrypter();
if ("recipient" in key) encrypter.addRecipient(key.recipient);
else encrypter.setPassphrase(key.passphrase);
const payload = await encrypter.encrypt(plain);
parentPort?.postMessage(payload, [payload.buffer as ArrayBuffer]);
