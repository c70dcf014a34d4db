--[[
  The admission rate observed over the last minute: what a waiting student's estimated wait
  is divided by. The service reads it at most once a second per lecture and instance, not once
  per status it answers.

  KEYS[1] admitLog  sorted set: time (ms) -> admittedTotal, the last minute of admissions

  Output: students admitted per second, as a string; '' when too few admissions were seen
]]
local rcall = redis.call
local oldest = rcall('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local newest = rcall('ZRANGE', KEYS[1], -1, -1)
if #oldest == 0 or oldest[1] == newest[1] then return '' end
local time = rcall('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
return tostring((tonumber(newest[1]) - tonumber(oldest[1])) / (math.max(now - tonumber(oldest[2]), 1) / 1000))
