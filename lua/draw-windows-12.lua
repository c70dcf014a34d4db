--[[
  The draw sweep of one lecture: its own draw if due, then every registration window's draw of it
  whose opening has come by Redis's clock, in opening order (includes/window-draw.lua; each runs
  once, whichever script and instance comes first). A window dropped from the term since its
  students pre-queued draws at the opening they waited for.

  KEYS[1] queue    KEYS[2] seq    KEYS[3] facts
  KEYS[4] prequeue KEYS[5] drawn  KEYS[6] draw     the lecture's own pre-queue and draw
  KEYS[7..12] wpre, wqueue, wopen, wdraws, wdrawn, wruns: the windows' (window-draw.lua)

  Output: { lectureDrew (0|1), pending, marker... }: pending counts the members still in the
          windows' pre-queues and those drawn and not recorded yet (the sweep comes back for
          both); the markers ('<window>@<opening>') of the draws run now
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
if now >= tonumber(opensAt) then
  out[1] = drawIfDue(now, tonumber(opensAt), 4, 5, 6, 1, 2)
  local W = { queue = 1, seq = 2, wpre = 7, wqueue = 8, wopen = 9, wdraws = 10, wdrawn = 11, wruns = 12 }
  for _, marker in ipairs(drawDueWindows(now, W)) do out[#out + 1] = marker end
end
out[2] = rcall('ZCARD', KEYS[8]) + rcall('ZCARD', KEYS[11])
return out
