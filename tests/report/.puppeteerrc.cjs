// Puppeteer must not download a browser: the render test uses Debian's /usr/bin/chromium
// (puppeteer-config.json). PUPPETEER_SKIP_DOWNLOAD=1 is set by the install script as well.
module.exports = { skipDownload: true };
