--[[
  Gives a consumed ticket back, with the lifetime it had left, after an enroll failed for a
  reason that was not the student's (the database was down, a lock time-out, a deadlock).

  KEYS[1] ticket    this student's ticket key
  KEYS[2] tickets   sorted set: student -> ticket expiry (ms)
  KEYS[3] inflight  sorted set: student -> deadline (ms)
  KEYS[4] stats     hash; counts consumed down again and givenBackOnFailure up

  ARGV[1] student id
  ARGV[2] the ticket's remaining lifetime in ms, as consume returned it

  Output: 1 when given back; 0 when the hold had already lapsed (its slot may have been
          granted to someone else, so giving it back could over-admit)
]]
local rcall = redis.call
if rcall('ZREM', KEYS[3], ARGV[1]) == 0 then return 0 end
local pttl = tonumber(ARGV[2])
local time = rcall('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
rcall('SET', KEYS[1], now + pttl, 'PX', pttl)
rcall('ZADD', KEYS[2], now + pttl, ARGV[1])
rcall('HINCRBY', KEYS[4], 'consumed', -1)
rcall('HINCRBY', KEYS[4], 'givenBackOnFailure', 1)
return 1
