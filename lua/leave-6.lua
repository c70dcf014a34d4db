--[[
  A student gives up their place in the pre-queue or the queue, and any unused ticket.

  KEYS[1] queue    sorted set: student -> join sequence number
  KEYS[2] ticket   this student's ticket key
  KEYS[3] tickets  sorted set: student -> ticket expiry (ms)
  KEYS[4] stats    hash; counts givenBack
  KEYS[5] gone     sorted set: sequence numbers that left the queue other than from its head,
                   so that live positions can be computed from sequence numbers (positions-3)
  KEYS[6] prequeue sorted set: '<HMAC hex>:<student>' of the pre-queued students

  ARGV[1] student id
  ARGV[2] the student's pre-queue member, or '' when the lecture has opened

  Output: { leftQueue (0|1, the pre-queue included), gaveBackTicket (0|1) }
]]
local rcall = redis.call
local seq = rcall('ZSCORE', KEYS[1], ARGV[1])
local left = 0
if ARGV[2] ~= '' then left = rcall('ZREM', KEYS[6], ARGV[2]) end
if seq then
  rcall('ZREM', KEYS[1], ARGV[1])
  rcall('ZADD', KEYS[5], seq, seq)
  left = 1
  -- Only numbers behind the head matter; the rest go, so the set stays as small as the queue.
  local first = rcall('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  if #first == 0 then rcall('DEL', KEYS[5]) else rcall('ZREMRANGEBYSCORE', KEYS[5], '-inf', '(' .. first[2]) end
end
local gave = rcall('DEL', KEYS[2])
rcall('ZREM', KEYS[3], ARGV[1])
if gave == 1 then rcall('HINCRBY', KEYS[4], 'givenBack', 1) end
return { left, gave }
