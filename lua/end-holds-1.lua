--[[
  Ends enroll holds whose transaction PostgreSQL answered (the seat is recorded, or refused) —
  each only if it is still the hold that transaction was for. A newer hold of the same student
  (a ticket granted again after the old one lapsed, and consumed since) carries another deadline
  and is left alone: ending it would stop counting a seat still being taken, and leave its
  enroll nothing to give back or settle.

  KEYS[1] inflight  sorted set: student -> deadline (ms)

  ARGV    student id, deadline (ms) as consume-5 set it; repeated for each hold

  Output: how many holds ended
]]
local rcall = redis.call
local ended = 0
for i = 1, #ARGV, 2 do
  local deadline = rcall('ZSCORE', KEYS[1], ARGV[i])
  if deadline and tonumber(deadline) == tonumber(ARGV[i + 1]) then
    rcall('ZREM', KEYS[1], ARGV[i])
    ended = ended + 1
  end
end
return ended
