// A live-queue stream as a student's browser reads it: its own connection, the token in a
// header, `event:`/`data:` frames parsed as they arrive.
const http = require('node:http');

/**
 * Opens GET `path` as Server-Sent Events. `onEvent(event, data)` for each frame; resolves
 * `{ status, ended, close }` once the response starts (a non-200 status: `ended` resolves at once).
 */
function openStream(baseUrl, path, token, onEvent) {
  return new Promise((resolve) => {
    const req = http.request(
      new URL(path, baseUrl),
      { headers: { authorization: `Bearer ${token}` }, agent: false },
      (res) => {
        let done;
        const ended = new Promise((r) => (done = r));
        if (res.statusCode !== 200) {
          res.resume();
          res.on('end', done);
          return resolve({ status: res.statusCode, ended, close: () => req.destroy() });
        }
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          buffer += chunk;
          let cut;
          while ((cut = buffer.indexOf('\n\n')) >= 0) {
            const lines = buffer.slice(0, cut).split('\n');
            buffer = buffer.slice(cut + 2);
            const event = lines
              .find((l) => l.startsWith('event:'))
              ?.slice(6)
              .trim();
            const data = lines
              .find((l) => l.startsWith('data:'))
              ?.slice(5)
              .trim();
            if (event && data) onEvent(event, JSON.parse(data));
          }
        });
        res.on('end', done);
        res.on('close', done);
        const close = () => {
          req.destroy();
          done(); // a destroyed request does not always emit 'close' on its response
        };
        resolve({ status: 200, ended, close });
      },
    );
    req.on('error', () => resolve({ status: 0, ended: Promise.resolve(), close: () => {} }));
    req.end();
  });
}

module.exports = { openStream };
