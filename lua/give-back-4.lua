--[[
  Gives a consumed ticket back, with the lifetime it had left, after an enroll failed for a
  reason that was not the student's (the database was down, a lock time-out, a deadlock) or a
  rule refused it.

  KEYS[1] ticket    this student's ticket key
  KEYS[2] tickets   sorted set: student -> ticket expiry (ms)
  KEYS[3] inflight  sorted set: student -> deadline (ms)
  KEYS[4] stats     hash; counts consumed down again and givenBackOnFailure up

  ARGV[1] student id
  ARGV[2] the ticket's remaining lifetime in ms, as consume returned it
  ARGV[3] this enroll's hold deadline (ms), as consume returned it

  Output: 1 when given back; 0 when that hold was gone (it lapsed and recovery settled it, so its
          slot may be someone else's: giving it back could over-admit) or is another enroll's
]]
local rcall = redis.call
local deadline = rcall('ZSCORE', KEYS[3], ARGV[1])
if not deadline or tonumber(deadline) ~= tonumber(ARGV[3]) then return 0 end
rcall('ZREM', KEYS[3], ARGV[1])
local pttl = tonumber(ARGV[2])
local time = rcall('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
rcall('SET', KEYS[1], now + pttl, 'PX', pttl)
rcall('ZADD', KEYS[2], now + pttl, ARGV[1])
rcall('HINCRBY', KEYS[4], 'consumed', -1)
rcall('HINCRBY', KEYS[4], 'givenBackOnFailure', 1)
return 1
