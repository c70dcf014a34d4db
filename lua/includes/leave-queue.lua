-- Takes `student` (queue number `seq`) out of the queue KEYS[q], and out of the waitlisted set
-- KEYS[w], recording the run of numbers that left other than from the head in KEYS[g] (see
-- leave-10's `gone`: live positions are computed from it). Returns true.
local function leaveQueue(q, g, w, student, seq)
  seq = tonumber(seq)
  redis.call('ZREM', KEYS[q], student)
  redis.call('SREM', KEYS[w], student)
  local first, last = seq, seq
  local before = redis.call('ZREVRANGEBYSCORE', KEYS[g], seq - 1, '-inf', 'WITHSCORES', 'LIMIT', 0, 1)
  if #before > 0 and tonumber(before[1]) == seq - 1 then
    first = tonumber(before[2])
    redis.call('ZREM', KEYS[g], before[1])
  end
  local after = redis.call('ZRANGEBYSCORE', KEYS[g], seq + 1, seq + 1)
  if #after > 0 then
    last = tonumber(after[1])
    redis.call('ZREM', KEYS[g], after[1])
  end
  redis.call('ZADD', KEYS[g], first, last)
  -- Only runs behind the head matter; the rest go, so the set stays as small as the queue.
  local head = redis.call('ZRANGE', KEYS[q], 0, 0, 'WITHSCORES')
  if #head == 0 then redis.call('DEL', KEYS[g]) else redis.call('ZREMRANGEBYSCORE', KEYS[g], '-inf', '(' .. head[2]) end
  return true
end
