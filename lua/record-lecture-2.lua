--[[
  Records a lecture as a committed PostgreSQL transaction left it (a create, an edit, an enroll
  batch, a cancel, a recovery) and what it did to some students' seats. Every writer sends the
  whole row, so the highest row version wins whole, whatever order commits arrive in.

  While the facts are incomplete (Redis lost its data, or they were dropped), the seat set
  may be missing students: then nothing is written but the version, as a tombstone that makes
  any rebuild read from an older snapshot refuse (rebuild-lecture-2), so it re-reads.

  KEYS[1] facts     hash: v (row version), seatsLeft, capacity, batchSize, ttl, maxActive,
                    opensAt, closesAt (ms; '' for never)
  KEYS[2] enrolled  set of students holding a seat

  ARGV[1] row version
  ARGV[2] 'enrolled' | 'cancelled' | '' : what happened to the students below
  ARGV[3] number of students n
  ARGV[4 .. 3+n] the students
  ARGV[4+n ..] field, value, ... of the facts

  Output: 1 when written, 0 when the facts were newer or incomplete
]]
local rcall = redis.call
local v, change, n = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])
local current = rcall('HMGET', KEYS[1], 'v', 'seatsLeft')
local currentV = tonumber(current[1] or '0')

if not current[2] then
  if v > currentV then rcall('HSET', KEYS[1], 'v', v) end
  return 0
end

for i = 4, 3 + n do
  if change == 'enrolled' then rcall('SADD', KEYS[2], ARGV[i]) end
  if change == 'cancelled' then rcall('SREM', KEYS[2], ARGV[i]) end
end
if v <= currentV then return 0 end
rcall('HSET', KEYS[1], 'v', v, unpack(ARGV, 4 + n))
return 1
