--[[
  A registration window's draw of one lecture's pre-queue (API.md v4, a fair opening per window),
  included by the scripts that may be first to run once the window has opened (join, the draw
  sweep). The window's pre-queued students of the lecture are members '<window>|<HMAC hex>:<student>'
  of one sorted set, all scored 0, so a lexicographic range over '<window>|' returns them in
  HMAC order; they take the next queue sequence numbers in that order, behind everyone already
  waiting. The marker (time, count, first number) makes every later call a no-op: the draw runs
  exactly once, whichever instance and script get there first. The drawn members are kept until
  PostgreSQL has recorded the draw.

  Needs `rcall` (redis.call) defined before the include. Keys are passed as their indexes in
  KEYS, so every key still comes from KEYS (one slot, as the keyslots test checks):
    wpre    hash: student -> their member (who is pre-queued, for reads and leaves)
    wqueue  sorted set (scores 0): the members of every window's pre-queue of the lecture
    wdraws  hash: window -> 'at count first', present once the window drew the lecture
    wdrawn  sorted set (scores 0): drawn members, until recorded
]]
local function drawWindow(now, name, queue, seq, wpre, wqueue, wdraws, wdrawn)
  if rcall('HEXISTS', KEYS[wdraws], name) == 1 then return 0 end
  local from, to = '[' .. name .. '|', '(' .. name .. '}' -- '}' follows '|'
  local members = rcall('ZRANGEBYLEX', KEYS[wqueue], from, to)
  if #members == 0 then return 0 end
  local first = tonumber(rcall('GET', KEYS[seq]) or '0') + 1
  local skip = #name + 1 + 65 -- '<window>|', 64 hex digits and ':'
  local queued, drawn = {}, {}
  for i, member in ipairs(members) do
    local student = string.sub(member, skip + 1)
    queued[#queued + 1] = first + i - 1
    queued[#queued + 1] = student
    drawn[#drawn + 1] = 0
    drawn[#drawn + 1] = member
    rcall('HDEL', KEYS[wpre], student)
    if #queued >= 1000 then
      rcall('ZADD', KEYS[queue], unpack(queued))
      rcall('ZADD', KEYS[wdrawn], unpack(drawn))
      queued, drawn = {}, {}
    end
  end
  if #queued > 0 then
    rcall('ZADD', KEYS[queue], unpack(queued))
    rcall('ZADD', KEYS[wdrawn], unpack(drawn))
  end
  rcall('INCRBY', KEYS[seq], #members)
  rcall('ZREMRANGEBYLEX', KEYS[wqueue], from, to)
  rcall('HSET', KEYS[wdraws], name, now .. ' ' .. #members .. ' ' .. first)
  return 1
end
