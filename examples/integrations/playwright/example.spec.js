const { test, expect } = require('@playwright/test');

test('the page the session serves', async ({ page }) => {
  await page.goto('/');
  await expect(page).toHaveTitle('tether example');
});
