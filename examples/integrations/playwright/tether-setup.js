// Starts `npm run dev` as the tether session pw-web, owned by this
// Playwright runner, and returns once 127.0.0.1:4173 accepts connections.
const { execFileSync } = require('node:child_process');

module.exports = () => {
  execFileSync('tether', ['start', '-q', '--name', 'pw-web', '--owner', String(process.pid),
    '--ready', 'tcp:127.0.0.1:4173', '--', 'npm', 'run', 'dev'], { stdio: 'inherit' });
};
