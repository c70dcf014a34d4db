--[[
  Rebuilds what Redis holds about a lecture from one PostgreSQL snapshot: its seat holders,
  then its facts, in one step, so complete facts always come with a complete seat set. Refused
  when Redis already saw a newer version (a commit recorded, or tombstoned, after the
  snapshot): the caller reads again. (The queue order's floor is restored before, by the
  line's restore-order-2: without facts no script of the line runs meanwhile.)

  KEYS[1] facts     hash (see record-lecture-2)
  KEYS[2] enrolled  set of students holding a seat

  ARGV[1] row version of the snapshot
  ARGV[2] number of facts arguments m (field, value pairs)
  ARGV[3 .. 2+m] field, value, ...
  ARGV[3+m ..] every student holding a seat

  Output: 1 when rebuilt, 0 when Redis had a newer version
]]
local rcall = redis.call
local v, m = tonumber(ARGV[1]), tonumber(ARGV[2])
if tonumber(rcall('HGET', KEYS[1], 'v') or '0') > v then return 0 end

rcall('DEL', KEYS[2], KEYS[1])
local batch = {}
for i = 3 + m, #ARGV do
  batch[#batch + 1] = ARGV[i]
  if #batch == 1000 then
    rcall('SADD', KEYS[2], unpack(batch))
    batch = {}
  end
end
if #batch > 0 then rcall('SADD', KEYS[2], unpack(batch)) end
rcall('HSET', KEYS[1], 'v', v, unpack(ARGV, 3, 2 + m))
return 1
