// Drive the operator web UI in a real headless Chromium: sign in (wrongly,
// then rightly), read the connections, issue and rename a token, set a
// credential, approve a pending question, read the activity, probe an
// unknown asset, sign out. Prints one JSON object with what it saw.
//
//     UI_URL=http://127.0.0.1:PORT UI_SECRET=... [UI_APPROVAL_ID=apr_...]
//     [UI_CREDENTIAL_CONNECTOR=id] node ui_browser.mjs
//
// Exit 0 when every step worked; 1 with the reason on stderr otherwise.
import { chromium } from "playwright-core";

const URL_BASE = (process.env.UI_URL || "").replace(/\/+$/, "");
const SECRET = process.env.UI_SECRET || "";
const APPROVAL_ID = process.env.UI_APPROVAL_ID || "";
const CREDENTIAL_CONNECTOR = process.env.UI_CREDENTIAL_CONNECTOR || "";
const CREDENTIAL_VALUE = "s3cret-value-123456";

const seen = {
  wrongSecretError: null,
  connectors: [],
  issuedToken: null,
  tokenVisibleAfterReload: null,
  tokenNames: [],
  credentialMasked: null,
  credentialValueVisible: false,
  approvalReason: null,
  approvalArgs: null,
  approvalStatus: null,
  approvalDecidedBy: null,
  activityRows: 0,
  activityAddresses: [],
  unknownAsset: null,
  signedOutShowsSignIn: false,
  pageErrors: [],
};
const consoleErrors = [];

function check(cond, what) {
  if (!cond) throw new Error(what);
}

if (!URL_BASE || !SECRET) {
  console.error("UI_URL and UI_SECRET are required");
  process.exit(1);
}

const browser = await chromium.launch({
  executablePath: process.env.CONNECTA_CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox"],
});
let failure = null;
try {
  const page = await browser.newPage();
  page.setDefaultTimeout(15_000);
  page.on("pageerror", (err) => seen.pageErrors.push(String(err && err.stack ? err.stack : err)));
  page.on("console", (msg) => {
    if (msg.type() === "error") consoleErrors.push(msg.text());
  });
  // Revoke / Remove ask for confirmation; accept if a later step uses them.
  page.on("dialog", (d) => d.accept());

  const text = (loc) => loc.innerText().then((s) => s.trim());
  const bodyText = () => page.evaluate(() => document.body.innerText);
  const bodyHtml = () => page.evaluate(() => document.documentElement.outerHTML);
  // Wait until an element's text is non-empty, or equals `want`.
  const waitText = (selector, want) =>
    page.waitForFunction(
      ([sel, w]) => {
        const t = document.querySelector(sel)?.textContent.trim() ?? "";
        return w === null ? t !== "" : t === w;
      },
      [selector, want ?? null],
    );
  const openTab = async (tab) => {
    await page.locator(`a[data-tab="${tab}"]`).click();
    await page.locator(`section[data-panel="${tab}"][data-loaded="true"]`).waitFor();
  };

  // 1. Sign-in form; a wrong secret is refused with a message.
  await page.goto(`${URL_BASE}/ui`);
  await page.locator("#signin-form").waitFor();
  await page.locator("#signin-secret").fill("definitely-not-the-secret");
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await waitText("#signin-error");
  seen.wrongSecretError = await text(page.locator("#signin-error"));
  check(await page.locator("#nav").isHidden(), "the tabs show after a wrong secret");

  // 2. The right secret; the Connections tab shows.
  await page.locator("#signin-secret").fill(SECRET);
  await page.locator("#signin-name").fill("browser-test");
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.locator('section[data-panel="connections"][data-loaded="true"]').waitFor();
  check((await text(page.locator("#whoami"))) === "browser-test", "signed-in name not shown");
  for (const row of await page.locator("tr[data-connector]").all()) {
    const tools = await text(row.locator('[data-col="tools"]'));
    seen.connectors.push({
      id: await row.getAttribute("data-connector"),
      state: await text(row.locator('[data-col="state"]')),
      tools: /^\d+$/.test(tools) ? Number(tools) : null,
    });
  }

  // 3. Tokens: issue, see it once, reload, rename.
  await openTab("tokens");
  await page.locator("#token-name").fill("from-browser");
  await page.getByRole("button", { name: "Issue token", exact: true }).click();
  await waitText("#issued-token");
  seen.issuedToken = await text(page.locator("#issued-token"));
  check(seen.issuedToken.startsWith("cnt_"), `issued token ${JSON.stringify(seen.issuedToken)}`);
  const tokenId = await page.locator("#issued-box").getAttribute("data-token-id");
  check(tokenId, "the issued box names no token id");
  await page.reload();
  await page.locator('section[data-panel="tokens"][data-loaded="true"]').waitFor();
  seen.tokenVisibleAfterReload =
    (await bodyText()).includes(seen.issuedToken) || (await bodyHtml()).includes(seen.issuedToken);
  check(!seen.tokenVisibleAfterReload, "the token is still in the page after a reload");
  const tokenRow = page.locator(`tr[data-token-id="${tokenId}"]`);
  await tokenRow.getByRole("button", { name: "Rename", exact: true }).click();
  await tokenRow.locator("input[data-rename]").fill("from-browser-2");
  await tokenRow.getByRole("button", { name: "Save", exact: true }).click();
  await waitText(`tr[data-token-id="${tokenId}"] [data-col="name"]`, "from-browser-2");
  seen.tokenNames = await page.locator('tr[data-token-id] [data-col="name"]').allInnerTexts();
  seen.tokenNames = seen.tokenNames.map((s) => s.trim());

  // 4. Credentials: set the one field; only a masked suffix shows.
  if (CREDENTIAL_CONNECTOR) {
    await openTab("credentials");
    const row = page.locator(`tr[data-credential="${CREDENTIAL_CONNECTOR}"]`);
    await row.getByRole("button", { name: "Set", exact: true }).click();
    const form = page.locator(`form[data-credential-form="${CREDENTIAL_CONNECTOR}"]`);
    await form.locator('input[data-field="token"]').fill(CREDENTIAL_VALUE);
    await form.getByRole("button", { name: "Save", exact: true }).click();
    await form.waitFor({ state: "detached" });
    const masked = row.locator('[data-field="token"] [data-col="masked"]');
    await masked.waitFor();
    seen.credentialMasked = await text(masked);
    seen.credentialValueVisible =
      (await bodyText()).includes(CREDENTIAL_VALUE) || (await bodyHtml()).includes(CREDENTIAL_VALUE);
    check(!seen.credentialMasked.includes(CREDENTIAL_VALUE), "the masked text holds the whole value");
    check(!seen.credentialValueVisible, "the credential value is in the page");
  }

  // 5. Approvals: the question shows with its reason and arguments; approve it.
  if (APPROVAL_ID) {
    await openTab("approvals");
    const row = page.locator(`tr[data-approval-id="${APPROVAL_ID}"]`);
    await row.waitFor();
    seen.approvalReason = await text(row.locator('[data-col="reason"]'));
    check(await row.locator('pre[data-col="args"]').count() === 1, "the approval row shows no arguments");
    seen.approvalArgs = await text(row.locator('pre[data-col="args"]'));
    await row.getByRole("button", { name: "Approve", exact: true }).click();
    await row.waitFor({ state: "detached" });
    await page.locator("#show-decided").check();
    await row.waitFor();
    seen.approvalStatus = await text(row.locator('[data-col="status"] .badge'));
    seen.approvalDecidedBy = await text(row.locator('[data-col="decided-by"]'));
  }

  // 6. Activity: newest first.
  await openTab("activity");
  seen.activityRows = await page.locator("tr[data-event-id]").count();
  seen.activityAddresses = (await page.locator('tr[data-event-id] [data-col="address"]').allInnerTexts()).map((s) => s.trim());

  // 7. An unknown asset is a plain 404.
  seen.unknownAsset = await page.evaluate(async (url) => {
    const r = await fetch(url);
    return { status: r.status, contentType: r.headers.get("content-type") };
  }, `${URL_BASE}/ui/assets/nope.js`);

  // 8. Sign out; the sign-in form is back.
  await page.locator("#signout").click();
  await page.locator("#signin-form").waitFor();
  seen.signedOutShowsSignIn = await page.locator("#nav").isHidden();
  check(seen.signedOutShowsSignIn, "the tabs still show after signing out");

  // Content-Security-Policy violations show up only as console errors.
  const csp = consoleErrors.filter((m) => /Content Security Policy/i.test(m));
  check(csp.length === 0, `CSP violations: ${csp.join(" | ")}`);
  check(seen.pageErrors.length === 0, "errors were thrown in the page");
} catch (e) {
  failure = e;
} finally {
  await browser.close();
}

console.log(JSON.stringify(seen));
for (const m of consoleErrors) console.error(`console error: ${m}`);
for (const m of seen.pageErrors) console.error(`page error: ${m}`);
if (failure) {
  console.error(`FAIL: ${failure.message || failure}`);
  process.exit(1);
}
