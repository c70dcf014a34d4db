// Lectures made through the service's own API, as an admin would.

/** POST /lectures with the admin's token; the created lecture, or an error. */
async function createLecture(api, admin, body) {
  const res = await api.bound.run(() =>
    api.pool.request({
      method: 'POST',
      path: '/lectures',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Bench', ...body }),
    }),
  );
  const json = await res.body.json();
  if (res.statusCode !== 201)
    throw new Error(`create lecture: ${res.statusCode} ${JSON.stringify(json)}`);
  return json;
}

module.exports = { createLecture };
