--[[
  Writes a lecture's facts as PostgreSQL has them, unless Redis already holds a newer version
  (two writers racing: the later row version wins, whatever order they arrive in).

  KEYS[1] facts  hash

  ARGV[1] row version
  ARGV[2..] field, value, field, value, ... (seatsLeft, capacity, batchSize, ttl, maxActive,
          opensAt, closesAt: times in ms since the epoch, closesAt '' for never)

  Output: 1 when written, 0 when a newer version was already there
]]
local rcall = redis.call
local current = rcall('HGET', KEYS[1], 'v')
if current and tonumber(current) > tonumber(ARGV[1]) then return 0 end
rcall('HSET', KEYS[1], 'v', ARGV[1], unpack(ARGV, 2))
return 1
