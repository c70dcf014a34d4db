// The peer a team would write without a queue: every student's enroll request goes straight
// to PostgreSQL with the textbook transaction (one round trip per statement, a pool of 10).
const http = require('node:http');
const { Pool } = require('pg');

const pool = new Pool({
  connectionString: process.env.DATABASE_URL,
  max: 10,
  connectionTimeoutMillis: 10_000,
});

async function enroll(lectureId, student) {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    const { rows } = await c.query('SELECT seats_left FROM lecture WHERE id = $1 FOR UPDATE', [
      lectureId,
    ]);
    const mine = await c.query(
      'SELECT 1 FROM enrollment WHERE lecture_id = $1 AND student_id = $2',
      [lectureId, student],
    );
    if (mine.rowCount > 0) return (await c.query('COMMIT'), 200);
    if (!rows[0] || rows[0].seats_left <= 0) return (await c.query('COMMIT'), 409);
    await c.query('UPDATE lecture SET seats_left = seats_left - 1 WHERE id = $1', [lectureId]);
    await c.query(
      "INSERT INTO enrollment (lecture_id, student_id, term, credits) VALUES ($1, $2, 'current', 3)",
      [lectureId, student],
    );
    await c.query('COMMIT');
    return 201;
  } catch (err) {
    await c.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    c.release();
  }
}

const server = http.createServer(async (req, res) => {
  const q = new URL(req.url, 'http://x').searchParams;
  try {
    const status = await enroll(Number(q.get('l')), q.get('s'));
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status }));
  } catch (err) {
    res.writeHead(503, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: err.message }));
  }
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(`ready http://127.0.0.1:${server.address().port}`));
process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
