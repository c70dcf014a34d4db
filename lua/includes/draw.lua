--[[
  The fair opening's draw, included by every script that may be first to run once a lecture
  opens (join, admit): the first of them moves the whole pre-queue into the queue, ahead
  of anyone who joins after opening. Pre-queue members are '<HMAC hex>:<student>', all scored
  0, so ZRANGE returns them in HMAC order; they take the next queue sequence numbers in that
  order. The marker (time, count, first number) makes every later call a no-op: the draw runs
  exactly once, whichever instance and script get there first.

  Needs `rcall` (redis.call) defined before the include. Keys are passed as their indexes in
  KEYS, so every key still comes from KEYS (one slot, as the keyslots test checks).
]]
local function drawIfDue(now, opensAt, prequeue, drawn, draw, queue, seq)
  if now < opensAt or rcall('EXISTS', KEYS[draw]) == 1 then return 0 end
  local members = rcall('ZRANGE', KEYS[prequeue], 0, -1)
  local first = tonumber(rcall('GET', KEYS[seq]) or '0') + 1
  local batch = {}
  for i, member in ipairs(members) do
    batch[#batch + 1] = first + i - 1
    batch[#batch + 1] = string.sub(member, 66) -- after 64 hex digits and ':'
    if #batch >= 1000 then
      rcall('ZADD', KEYS[queue], unpack(batch))
      batch = {}
    end
  end
  if #batch > 0 then rcall('ZADD', KEYS[queue], unpack(batch)) end
  if #members > 0 then
    rcall('INCRBY', KEYS[seq], #members)
    rcall('RENAME', KEYS[prequeue], KEYS[drawn])
  end
  rcall('HSET', KEYS[draw], 'at', now, 'count', #members, 'first', first)
  return 1
end
