// Playwright with the app's dev server as a tether session: globalSetup
// starts it with `tether start --ready` (it returns once the port answers,
// so no test races the server's start) and owned by the Playwright runner
// (if the runner dies, the session is stopped); globalTeardown stops it,
// with everything the server started, after the suite.
const { defineConfig } = require('@playwright/test');

module.exports = defineConfig({
  testDir: '.',
  globalSetup: require.resolve('./tether-setup.js'),
  globalTeardown: require.resolve('./tether-teardown.js'),
  use: {
    baseURL: 'http://127.0.0.1:4173',
    // A system Chromium (Debian's chromium package), as root needs --no-sandbox.
    launchOptions: {
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu'],
    },
  },
});
