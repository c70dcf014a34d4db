--[[
  Rebuilds what Redis holds about a lecture from one PostgreSQL snapshot: its seat holders,
  then its facts, in one step, so complete facts always come with a complete seat set. Refused
  when Redis already saw a newer version (a commit recorded, or tombstoned, after the
  snapshot): the caller reads again.
  After Redis lost its data it also restores what order depends on: the queue sequence
  counter never goes below a number PostgreSQL has seen (so none is ever reused), and a draw
  PostgreSQL recorded is never run again.

  KEYS[1] facts     hash (see record-lecture-2)
  KEYS[2] enrolled  set of students holding a seat
  KEYS[3] seq       counter of queue sequence numbers
  KEYS[4] draw      hash: the draw marker (see includes/draw.lua)

  ARGV[1] row version of the snapshot
  ARGV[2] number of facts arguments m (field, value pairs)
  ARGV[3 .. 2+m] field, value, ...
  ARGV[3+m] the highest queue sequence number PostgreSQL has recorded (0: none)
  ARGV[4+m .. 6+m] the recorded draw's time (ms), count and first number ('' : not drawn)
  ARGV[7+m ..] every student holding a seat

  Output: 1 when rebuilt, 0 when Redis had a newer version
]]
local rcall = redis.call
local v, m = tonumber(ARGV[1]), tonumber(ARGV[2])
if tonumber(rcall('HGET', KEYS[1], 'v') or '0') > v then return 0 end

local floor = tonumber(ARGV[3 + m])
if tonumber(rcall('GET', KEYS[3]) or '0') < floor then rcall('SET', KEYS[3], floor) end
if ARGV[4 + m] ~= '' and rcall('EXISTS', KEYS[4]) == 0 then
  rcall('HSET', KEYS[4], 'at', ARGV[4 + m], 'count', ARGV[5 + m], 'first', ARGV[6 + m])
end

rcall('DEL', KEYS[2], KEYS[1])
local batch = {}
for i = 7 + m, #ARGV do
  batch[#batch + 1] = ARGV[i]
  if #batch == 1000 then
    rcall('SADD', KEYS[2], unpack(batch))
    batch = {}
  end
end
if #batch > 0 then rcall('SADD', KEYS[2], unpack(batch)) end
rcall('HSET', KEYS[1], 'v', v, unpack(ARGV, 3, 2 + m))
return 1
