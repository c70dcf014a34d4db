--[[
  The students whose enroll hold passed its deadline unrecorded, by Redis's clock: the same
  clock that set the deadlines (consume-5) and that regrant-3 checks, so an instance whose own
  clock runs ahead or behind neither settles a hold early nor leaves it late. The deadlines come
  too: PostgreSQL settles a hold only once its own clock has passed the deadline as well
  (src/holds/hold-recovery.ts).

  KEYS[1] inflight  sorted set: student -> deadline (ms)

  Output: { student, deadline, ... } for every hold with a deadline at or before now
]]
local rcall = redis.call
local time = rcall('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
return rcall('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'WITHSCORES')
