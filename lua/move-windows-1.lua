--[[
  The windows of the lecture's term were edited: each pending pre-queue of a window still in the
  term waits for that window's opening as it is now (moved later, or earlier); a window dropped
  keeps the opening its students waited for (see includes/window-draw.lua).

  KEYS[1] wopen  hash: window -> the opening (ms) its pre-queue waits for

  ARGV[..] window, opening (ms), window, opening, ...

  Output: the number of pending windows moved
]]
local rcall = redis.call
local moved = 0
for i = 1, #ARGV, 2 do
  local current = rcall('HGET', KEYS[1], ARGV[i])
  if current and current ~= ARGV[i + 1] then
    rcall('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
    moved = moved + 1
  end
end
return moved
