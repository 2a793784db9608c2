import { expect, test } from "./fixtures.ts";
import { followMenuLink, jsEnabled, login, MOBILE, sidebar } from "./helpers.ts";

// The signed-in shell's two modals, Exit and Support, share one dialog hook
// with the contact popup and the send form's risk warning (useDialog). With
// scripts Escape closes each of them and focus goes back to the link that
// opened it; without scripts each is a URL (`?modal=`) and its backdrop is a
// link back. The contact popup's and the risk warning's own tests (info.spec,
// send.spec) check the same for those two.

const MODALS = [
  { link: "Exit", name: "Are you sure you want to exit?", param: "exit" },
  { link: "Support", name: "Start Here", param: "support" },
] as const;

for (const modal of MODALS) {
  test(`the ${modal.link} modal from the sidebar: Escape closes it and focus goes back to '${modal.link}'`, async ({
    page,
    signInAt,
  }, testInfo) => {
    await signInAt("/history");
    const opener = sidebar(page).getByRole("link", { name: modal.link });
    const dialog = page.getByRole("dialog", { name: modal.name });

    await opener.click();
    await expect(dialog).toBeVisible();
    await expect(page).toHaveURL(new RegExp(`/history\\?modal=${modal.param}$`));
    if (!jsEnabled(testInfo)) {
      // Without scripts the backdrop is a link to the page without the modal.
      await page.mouse.click(5, 5);
      await expect(dialog).toHaveCount(0);
      await expect(page).toHaveURL(/\/history$/);
      return;
    }
    // Focus starts inside the dialog (a modal dialog keeps it there).
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.closest("dialog") !== null))
      .toBe(true);
    await page.keyboard.press("Escape");
    await expect(dialog).toHaveCount(0);
    await expect(page).toHaveURL(/\/history$/);
    await expect(opener).toBeFocused();

    // Opened again with the keyboard, closed the same way: focus still comes back.
    await page.keyboard.press("Enter");
    await expect(dialog).toBeVisible();
    await page.keyboard.press("Escape");
    await expect(dialog).toHaveCount(0);
    await expect(opener).toBeFocused();
  });
}

test("opened from the mobile menu, which closes: Escape gives focus to the menu's button", async ({
  page,
  user,
}, testInfo) => {
  test.skip(!jsEnabled(testInfo), "Escape closes a modal dialog only with scripts");
  await page.setViewportSize(MOBILE);
  await login(page, testInfo, user);
  await followMenuLink(page, "Exit");
  const dialog = page.getByRole("dialog", { name: "Are you sure you want to exit?" });
  await expect(dialog).toBeVisible();
  await page.keyboard.press("Escape");
  await expect(dialog).toHaveCount(0);
  await expect(page).toHaveURL(/\/home$/);
  await expect(page.locator(".burger > summary")).toBeFocused();
});
