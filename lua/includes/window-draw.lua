--[[
  Registration windows' draws of one lecture's pre-queues (API.md v4, a fair opening per window),
  included by the scripts that may be first to run once a window has opened (join, the draw
  sweep). Whether a window has opened is Redis's clock's to say, as for the lecture's own draw:
  the opening each pending pre-queue waits for is kept here (wopen), set by the joins that enter
  it and moved by the windows' edits, so every script judges one time by one clock.

  A window's pre-queued students of the lecture are members '<window>|<HMAC hex>:<student>' of one
  sorted set, all scored 0, so a lexicographic range over '<window>|' returns them in HMAC order;
  they take the next queue sequence numbers in that order, behind everyone already waiting. The
  window leaves wopen as it draws, so it draws once, whichever instance and script get there
  first; its marker and its drawn members stay until PostgreSQL has recorded the draw.

  Needs `rcall` (redis.call) defined before the include. Keys are passed as their indexes in
  KEYS, so every key still comes from KEYS (one slot, as the keyslots test checks):
    wpre    hash: student -> their member (who is pre-queued, for reads and leaves)
    wqueue  sorted set (scores 0): the members of every window's pre-queue of the lecture
    wopen   hash: window -> the opening (ms) its pre-queue waits for
    wdraws  hash: '<window>@<opening>' -> 'at count first', until the draw is recorded
    wdrawn  sorted set (scores 0): '<window>@<opening>|<HMAC hex>:<student>', until recorded
    wruns   sorted set: first queue number of each window draw -> its last (the admission log's
            `via` of what a window drew)
]]
local function drawWindow(now, name, at, K)
  local from, to = '[' .. name .. '|', '(' .. name .. '}' -- '}' follows '|'
  local members = rcall('ZRANGEBYLEX', KEYS[K.wqueue], from, to)
  rcall('HDEL', KEYS[K.wopen], name)
  if #members == 0 then return nil end -- everyone left: nothing to draw
  local first = tonumber(rcall('GET', KEYS[K.seq]) or '0') + 1
  local marker = name .. '@' .. at
  local skip = #name + 1 + 65 -- '<window>|', 64 hex digits and ':'
  local queued, drawn = {}, {}
  for i, member in ipairs(members) do
    local student = string.sub(member, skip + 1)
    queued[#queued + 1] = first + i - 1
    queued[#queued + 1] = student
    drawn[#drawn + 1] = 0
    drawn[#drawn + 1] = marker .. string.sub(member, #name + 1)
    rcall('HDEL', KEYS[K.wpre], student)
    if #queued >= 1000 then
      rcall('ZADD', KEYS[K.queue], unpack(queued))
      rcall('ZADD', KEYS[K.wdrawn], unpack(drawn))
      queued, drawn = {}, {}
    end
  end
  if #queued > 0 then
    rcall('ZADD', KEYS[K.queue], unpack(queued))
    rcall('ZADD', KEYS[K.wdrawn], unpack(drawn))
  end
  rcall('INCRBY', KEYS[K.seq], #members)
  rcall('ZREMRANGEBYLEX', KEYS[K.wqueue], from, to)
  rcall('ZADD', KEYS[K.wruns], first, first + #members - 1)
  rcall('HSET', KEYS[K.wdraws], marker, now .. ' ' .. #members .. ' ' .. first)
  return marker
end

-- Every pending window whose opening has come, in opening order; the markers of those drawn.
local function drawDueWindows(now, K)
  local drawn = {}
  if rcall('EXISTS', KEYS[K.wopen]) == 0 then return drawn end
  local flat = rcall('HGETALL', KEYS[K.wopen])
  local due = {}
  for i = 1, #flat, 2 do
    local at = tonumber(flat[i + 1])
    if at and at <= now then due[#due + 1] = { flat[i], at } end
  end
  table.sort(due, function(a, b) return a[2] < b[2] or (a[2] == b[2] and a[1] < b[1]) end)
  for _, w in ipairs(due) do
    local marker = drawWindow(now, w[1], w[2], K)
    if marker then drawn[#drawn + 1] = marker end
  end
  return drawn
end
