// Stops the session pw-web: the dev server and whatever it started.
const { execFileSync } = require('node:child_process');

module.exports = () => {
  execFileSync('tether', ['stop', 'pw-web'], { stdio: 'inherit' });
};
