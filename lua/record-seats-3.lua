--[[
  Records what a committed PostgreSQL transaction did to a lecture's seats: the new seats
  left (only if newer than what Redis holds, by the lecture row's version, so that commits
  arriving out of order never roll the figure back), and the student's seat.

  KEYS[1] facts     hash: v (row version), seatsLeft, ...
  KEYS[2] enrolled  set of students holding a seat
  KEYS[3] inflight  sorted set: student -> deadline (ms)

  ARGV[1] row version after the transaction
  ARGV[2] seats left after the transaction
  ARGV[3] student id, or '' when no student is concerned (a capacity change)
  ARGV[4] 'enrolled' (took a seat), 'cancelled' (gave one back) or 'refused' (FULL, CLOSED)

  Output: 1 when the seats figure was updated, 0 when Redis already held a newer one
]]
local rcall = redis.call
local student, outcome = ARGV[3], ARGV[4]
if student ~= '' then
  rcall('ZREM', KEYS[3], student)
  if outcome == 'enrolled' then rcall('SADD', KEYS[2], student) end
  if outcome == 'cancelled' then rcall('SREM', KEYS[2], student) end
end
-- Without facts there is nothing to correct: the next reader loads them from PostgreSQL.
if rcall('EXISTS', KEYS[1]) == 0 then return 0 end
if tonumber(rcall('HGET', KEYS[1], 'v')) >= tonumber(ARGV[1]) then return 0 end
rcall('HSET', KEYS[1], 'v', ARGV[1], 'seatsLeft', ARGV[2])
return 1
