--[[
  A student gives up their place in the queue and any unused ticket.

  KEYS[1] queue    sorted set: student -> join sequence number
  KEYS[2] ticket   this student's ticket key
  KEYS[3] tickets  sorted set: student -> ticket expiry (ms)
  KEYS[4] stats    hash; counts givenBack

  ARGV[1] student id

  Output: { leftQueue (0|1), gaveBackTicket (0|1) }
]]
local rcall = redis.call
local left = rcall('ZREM', KEYS[1], ARGV[1])
local gave = rcall('DEL', KEYS[2])
rcall('ZREM', KEYS[3], ARGV[1])
if gave == 1 then rcall('HINCRBY', KEYS[4], 'givenBack', 1) end
return { left, gave }
