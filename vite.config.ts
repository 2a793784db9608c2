import { reactRouter } from "@react-router/dev/vite";
import { defineConfig } from "vite";

// How the browser's code is cut into files (record 034). Left to itself the
// bundler made 20–30 files per page, most under 1 KB, each compressed on its
// own (a gzip stream per file loses what the others would have shared): four
// shared files instead. Lazily loaded code (zod and conform's parser, the send form,
// the support modal) stays out of every group, so it stays out of first loads.
const APP = /[\\/]app[\\/]/u.source;

export default defineConfig({
  plugins: [reactRouter()],
  build: {
    rolldownOptions: {
      output: {
        codeSplitting: {
          groups: [
            {
              // React, React DOM, React Router, remix-utils' components, Vite's preload helper (else
              // it lands in whichever group the bundler picks, and pulls that onto every page): every
              // page. Not what only
              // lazily loaded code uses: zod and conform (the forms' checks), @noble and @scure (the
              // send form's address check, common/addresses.ts).
              name: "vendor",
              priority: 3,
              test: (id: string) =>
                /vite[\\/]preload-helper/u.test(id) ||
                (/node_modules/u.test(id) &&
                  !/node_modules[\\/](zod|@conform-to|@noble|@scure)[\\/]/u.test(id)),
            },
            {
              // The forms' state and fields: the pages with a form (sign-in, create, restore,
              // security) and the lazily loaded forms, not the signed-in lists. The support texts
              // are in no group: only the contact popup and the support modal (both lazy) use them.
              name: "forms",
              priority: 2.5,
              test: new RegExp(
                `${APP}components[\\\\/](use-validated-form|form-state|field|auto-hide|phrase-grid)`,
                "u",
              ),
            },
            {
              // What the public and the signed-in pages share (root, dialogs, icons, toasts).
              name: "shell",
              priority: 2,
              test: new RegExp(
                `${APP}components[\\\\/](icons|toasts|modal|use-dialog|hydrated|submit-button|copy-button)`,
                "u",
              ),
            },
            {
              // What every signed-in page uses (the layout's lists, amounts, live events).
              name: "account",
              priority: 1,
              test: new RegExp(
                `${APP}(components[\\\\/](notification-list|transactions|money|coin-icon|use-live-events|use-wallet-view|lazy-component)|lib[\\\\/]format)`,
                "u",
              ),
            },
          ],
        },
      },
    },
  },
});
