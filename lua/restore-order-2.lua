--[[
  After Redis lost a lecture's data, restores what its queue order depends on, from what
  PostgreSQL recorded: the queue sequence counter never goes below a number PostgreSQL has seen
  (so none is ever reused), and a draw PostgreSQL recorded is never run again. Idempotent: a
  counter already above the floor, or a marker already there, is left alone.

  KEYS[1] seq   counter of queue sequence numbers
  KEYS[2] draw  hash: the draw marker (see includes/draw.lua)

  ARGV[1] the highest queue sequence number PostgreSQL has recorded (0: none)
  ARGV[2 .. 4] the recorded draw's time (ms), count and first number ('' : not drawn)

  Output: 1
]]
local rcall = redis.call
local floor = tonumber(ARGV[1])
if tonumber(rcall('GET', KEYS[1]) or '0') < floor then rcall('SET', KEYS[1], floor) end
if ARGV[2] ~= '' and rcall('EXISTS', KEYS[2]) == 0 then
  rcall('HSET', KEYS[2], 'at', ARGV[2], 'count', ARGV[3], 'first', ARGV[4])
end
return 1
