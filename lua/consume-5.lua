--[[
  Consumes a student's ticket for an enroll: the DEL only one of any number of concurrent
  requests can win. The winner's admission moves to `inflight` until its transaction settles,
  so the seat stays counted as held and admission cannot hand it out twice.

  KEYS[1] ticket    this student's ticket key
  KEYS[2] tickets   sorted set: student -> ticket expiry (ms)
  KEYS[3] inflight  sorted set: student -> deadline (ms)
  KEYS[4] stats     hash; counts consumed
  KEYS[5] grants    hash: student -> queue sequence number of their admission

  ARGV[1] student id
  ARGV[2] how long (ms) the enroll may take before its hold is dropped (a crashed instance)

  Output: { the ticket's remaining lifetime in ms (> 0), its queue sequence number (0: not
          known), the hold's deadline (ms since the epoch, by this server's clock) }, or -1
          when there was no ticket
]]
local rcall = redis.call
local pttl = rcall('PTTL', KEYS[1])
if pttl <= 0 then return -1 end
rcall('DEL', KEYS[1])
rcall('ZREM', KEYS[2], ARGV[1])
local time = rcall('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local deadline = now + tonumber(ARGV[2])
rcall('ZADD', KEYS[3], deadline, ARGV[1])
rcall('HINCRBY', KEYS[4], 'consumed', 1)
return { pttl, tonumber(rcall('HGET', KEYS[5], ARGV[1]) or '0'), deadline }
