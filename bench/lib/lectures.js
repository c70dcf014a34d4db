// Lectures and terms made through the service's own API, as an admin would.

/** One admin request with a JSON body; the answer's JSON, or an error unless `expect`ed. */
async function adminJson(api, admin, method, path, body, expect) {
  const res = await api.bound.run(() =>
    api.pool.request({
      method,
      path,
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  );
  const json = await res.body.json();
  if (res.statusCode !== expect)
    throw new Error(`${method} ${path}: ${res.statusCode} ${JSON.stringify(json)}`);
  return json;
}

/** POST /lectures with the admin's token; the created lecture, or an error. */
const createLecture = (api, admin, body) =>
  adminJson(api, admin, 'POST', '/lectures', { title: 'Bench', ...body }, 201);

/** PUT /terms/:term: the term's credit limit. */
const setTermLimit = (api, admin, term, maxCredits) =>
  adminJson(api, admin, 'PUT', `/terms/${term}`, { maxCredits }, 200);

module.exports = { adminJson, createLecture, setTermLimit };
