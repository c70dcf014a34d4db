-- The enroll transaction on one hot lecture row, for pgbench (-D lid=<lecture id>):
-- lock the row, check the student's row and the seat, decrement, insert.
\set sid random(1, 2000000000)
BEGIN;
SELECT seats_left FROM lecture WHERE id = :lid FOR UPDATE;
SELECT 1 FROM enrollment WHERE lecture_id = :lid AND student_id = 'pgb' || :sid;
UPDATE lecture SET seats_left = seats_left - 1 WHERE id = :lid AND seats_left > 0;
INSERT INTO enrollment (lecture_id, student_id, term, credits) VALUES (:lid, 'pgb' || :sid, 'current', 3) ON CONFLICT DO NOTHING;
END;
