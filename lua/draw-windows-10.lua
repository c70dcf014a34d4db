--[[
  The draw sweep of one lecture: its own draw if due, then the draws of the registration windows
  opened by now, in their opening order, then those of windows that no longer exist (dropped or
  renamed since students pre-queued for them: drawn at once, so nobody waits for an opening that
  will not come). Each draw runs once, whichever script and instance comes first (includes/).

  KEYS[1] queue    KEYS[2] seq    KEYS[3] facts
  KEYS[4] prequeue KEYS[5] drawn  KEYS[6] draw     the lecture's own pre-queue and draw
  KEYS[7] wpre     KEYS[8] wqueue KEYS[9] wdraws KEYS[10] wdrawn   the windows' (window-draw.lua)

  ARGV[1] d, the number of windows opened by now
  ARGV[2 .. 1+d] their names, by opening
  ARGV[2+d ..] the names of the term's windows not opened yet (never drawn here)

  Output: { lectureDrew (0|1), pending (members still in the windows' pre-queues, or drawn and
          not recorded yet), name... }
          the names of the windows that drew now
  Errors: { -1 } when the lecture's facts are missing or incomplete (the caller rebuilds them)
]]
local rcall = redis.call

--- @include "draw"
--- @include "window-draw"

local opensAt = rcall('HGET', KEYS[3], 'opensAt')
if not opensAt then return { -1 } end
local time = rcall('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local out = { 0, 0 }
if now < tonumber(opensAt) then
  out[2] = rcall('ZCARD', KEYS[8])
  return out -- the lecture itself has not opened: no window draws it yet
end
out[1] = drawIfDue(now, tonumber(opensAt), 4, 5, 6, 1, 2)

local d = tonumber(ARGV[1])
local later = {}
for i = 2 + d, #ARGV do later[ARGV[i]] = true end
for i = 2, 1 + d do
  if drawWindow(now, ARGV[i], 1, 2, 7, 8, 9, 10) == 1 then out[#out + 1] = ARGV[i] end
end
-- Windows gone from the term: each name still pending, one after another.
local from = '-'
while true do
  local next = rcall('ZRANGEBYLEX', KEYS[8], from, '+', 'LIMIT', 0, 1)
  if #next == 0 then break end
  local name = string.match(next[1], '^([^|]*)|')
  if not later[name] and drawWindow(now, name, 1, 2, 7, 8, 9, 10) == 1 then
    out[#out + 1] = name
  else
    from = '(' .. name .. '}' -- past this window's members
  end
end
-- Drawn but not recorded yet counts as pending too: the sweep records it.
out[2] = rcall('ZCARD', KEYS[8]) + rcall('ZCARD', KEYS[10])
return out
