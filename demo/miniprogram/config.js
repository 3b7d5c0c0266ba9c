// Where the demo partner backend runs: `npm run demo` in the repository prints it.
// In DevTools, "Do not verify request domains" (urlCheck: false) lets a local http address
// through; a real mini-program needs https and both domains on the request allow-list.
module.exports = {
  partnerBackend: 'http://127.0.0.1:5173',
};
