// The support modal's code is loaded when it opens, or is about to (the pointer
// or the focus on 'Support'), not with every signed-in page; the server renders
// it in place for `?modal=support` (record 034).
import { lazyComponent } from "./lazy-component.ts";

export const { Component: SupportModal, preload: prepareSupportModal } = lazyComponent(() =>
  import("./support-modal.tsx").then((module) => module.SupportModal),
);
