--[[
  A student's claims in a term (src/auto-enroll/clearance.ts): the lectures whose tickets the
  service granted them to auto-enroll and whose enrolls have not finished. Before it grants an
  auto-enrolling student another ticket, the service judges it against the seats they hold
  (PostgreSQL) and these claims (here, in the student's own slot, which every lecture's
  admission can reach), and claims it only if nobody changed the claims meanwhile (`v`): two
  lectures clearing one student at once cannot both count the same room.

  KEYS[1] claims  hash: lecture id -> '<clearings>:<expiry ms>' (clearings: the admission calls
                  that cleared the student there and have not yet given the clearing back, see
                  'unused'), 'v' -> version (every new claim and every claim gone adds one),
                  'w:' .. lecture id -> a lecture whose head this student blocks until a claim
                  goes (its admission is run again then)

  ARGV[1] 'read'     Output: { version, lecture ids claimed and not expired... }
          'claim'    ARGV[2] the version read, ARGV[3] lecture id, ARGV[4] how long it lives (ms).
                     Output: 1 claimed; 0 the claims changed since the read (read again)
          'block'    ARGV[2] the version read, ARGV[3] lecture id: the lecture waits for a claim to
                     go. Output: 1 noted; 0 the claims changed since the read (read again)
          'unused'   ARGV[2] lecture id: one clearing there was not granted (another call's may
                     have been: the claim goes with the last)
          'release'  ARGV[2] lecture id: the enroll there is over, the claim goes.
          Both output the lectures waiting on this student when the claim went (their waits end
          here); else none
]]
local rcall = redis.call
local time = rcall('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local KEEP_MS = 3600000 -- the whole hash goes an hour after its last change
local op = ARGV[1]

-- The claims alive now; expired ones go (a claim outlives its enroll only when its instance died).
-- A claim that expired is a claim gone: the version moves, so a judgment read before cannot
-- claim or wait against it.
local function live()
  local ids = {}
  local flat = rcall('HGETALL', KEYS[1])
  for i = 1, #flat, 2 do
    local field, value = flat[i], flat[i + 1]
    if field ~= 'v' and string.sub(field, 1, 2) ~= 'w:' then
      if tonumber(string.match(value, ':(%d+)$')) <= now then
        rcall('HDEL', KEYS[1], field)
        rcall('HINCRBY', KEYS[1], 'v', 1)
      else
        ids[#ids + 1] = field
      end
    end
  end
  return ids
end

-- The lectures waiting on this student: they are admitted again now.
local function waiters()
  local waiting = {}
  for _, field in ipairs(rcall('HKEYS', KEYS[1])) do
    if string.sub(field, 1, 2) == 'w:' then
      waiting[#waiting + 1] = string.sub(field, 3)
      rcall('HDEL', KEYS[1], field)
    end
  end
  return waiting
end

if op == 'read' then
  local ids = live()
  local out = { tonumber(rcall('HGET', KEYS[1], 'v') or '0') }
  for _, id in ipairs(ids) do out[#out + 1] = id end
  return out
end

if op == 'release' or op == 'unused' then
  local value = rcall('HGET', KEYS[1], ARGV[2])
  -- gone already (expired, or released): whoever waited is admitted again all the same
  if not value then return waiters() end
  local clearings, expiry = string.match(value, '^(%d+):(%d+)$')
  if op == 'unused' and tonumber(clearings) > 1 then
    rcall('HSET', KEYS[1], ARGV[2], (tonumber(clearings) - 1) .. ':' .. expiry)
    return {}
  end
  rcall('HDEL', KEYS[1], ARGV[2])
  rcall('HINCRBY', KEYS[1], 'v', 1)
  return waiters()
end

live()

if tostring(rcall('HGET', KEYS[1], 'v') or '0') ~= ARGV[2] then return 0 end
if op == 'claim' then
  local value = rcall('HGET', KEYS[1], ARGV[3])
  local clearings = value and tonumber(string.match(value, '^(%d+):')) or 0
  rcall('HSET', KEYS[1], ARGV[3], (clearings + 1) .. ':' .. (now + tonumber(ARGV[4])))
  rcall('HINCRBY', KEYS[1], 'v', 1)
  rcall('HDEL', KEYS[1], 'w:' .. ARGV[3])
else
  rcall('HSET', KEYS[1], 'w:' .. ARGV[3], 1)
end
rcall('PEXPIRE', KEYS[1], KEEP_MS)
return 1
