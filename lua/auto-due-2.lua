--[[
  The unused tickets of students who auto-enroll, granted long enough ago that the instance
  that granted them should have enrolled them by now (it died, or its attempt failed): the
  cron's safety net enrolls them (API.md v4, automatic enrollment). Read only.

  KEYS[1] tickets  sorted set: student -> ticket expiry (ms), the unconsumed tickets
  KEYS[2] auto     hash: student -> their auto-enroll settings (JSON), '<student>!' -> the
                   refusal that gave their place up
  ARGV[1] the latest expiry (ms) a ticket may have to be listed (its grant old enough)
  ARGV[2] the most to list

  Output: { student1, settings1, student2, settings2, ... }; settings '' for a ticket holder
          whose place the service gave up (the refusal there, the settings gone): it is left
]]
local rcall = redis.call
local out = {}
local due = rcall('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, student in ipairs(due) do
  local settings = rcall('HGET', KEYS[2], student)
  if settings then
    out[#out + 1] = student
    out[#out + 1] = settings
  elseif rcall('HEXISTS', KEYS[2], student .. '!') == 1 then
    -- the service gave this place up while an enroll held the ticket, given back since
    out[#out + 1] = student
    out[#out + 1] = ''
  end
end
return out
