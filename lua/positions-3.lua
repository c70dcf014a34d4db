--[[
  What every live stream of a lecture needs to know its student's position, in one call per
  lecture (not one per stream): a waiting student with join sequence number s is at position
  s - head + 1 - (gone sequence numbers in [head, s)). Every number between the head and s is
  either still queued or gone: admission pops only from the head, and leaving records itself
  (leave-6: runs of numbers, first as the score, last as the member).

  KEYS[1] queue     sorted set: student -> join sequence number
  KEYS[2] gone      sorted set: runs of sequence numbers that left other than from the head
  KEYS[3] admitLog  sorted set: time (ms) -> admittedTotal, the last minute of admissions

  Output: { head (-1 when empty), waiting, rate ('' when too few admissions were seen),
            first, last, first, last, ... (the gone runs behind the head) }
]]
local rcall = redis.call
local first = rcall('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local waiting = rcall('ZCARD', KEYS[1])
local head = -1
if #first > 0 then head = tonumber(first[2]) end
if head > 0 then rcall('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. head) end

local rate = ''
local oldest = rcall('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
local newest = rcall('ZRANGE', KEYS[3], -1, -1)
if #oldest > 0 and oldest[1] ~= newest[1] then
  local time = rcall('TIME')
  local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  rate = tostring((tonumber(newest[1]) - tonumber(oldest[1])) / (math.max(now - tonumber(oldest[2]), 1) / 1000))
end

local reply = { head, waiting, rate }
if head > 0 then
  local runs = rcall('ZRANGEBYSCORE', KEYS[2], head, '+inf', 'WITHSCORES')
  for i = 1, #runs, 2 do
    reply[#reply + 1] = tonumber(runs[i + 1])
    reply[#reply + 1] = tonumber(runs[i])
  end
end
return reply
