--[[
  The service gives an auto-enrolling student's place up (API.md v4): decides, in one step,
  whether this give-up is the first (it took the settings: it keeps the refusal for the student
  and mails them) and whether the place is one the service gave up (what is left of it — a
  ticket an enroll in flight got back after the first give-up's leave found none — goes too).

  KEYS[1] auto   hash: student -> auto-enroll settings, '<student>!' -> the last refusal

  ARGV[1] student id
  ARGV[2] the refusal (JSON)

  Output: 1 the first give-up of the place (the refusal is kept now); 2 given up already (the
          refusal is there, the settings gone); 0 the settings went another way (the student
          turned auto-enroll off, or left): the place, if any, is the student's own
]]
local rcall = redis.call
local refusalField = ARGV[1] .. '!'
if rcall('HDEL', KEYS[1], ARGV[1]) == 1 then
  rcall('HSET', KEYS[1], refusalField, ARGV[2])
  return 1
end
if rcall('HEXISTS', KEYS[1], refusalField) == 1 then return 2 end
return 0
