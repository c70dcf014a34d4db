--[[
  A student's claims in a term (src/auto-enroll/clearance.ts): the lectures whose tickets the
  service granted them to auto-enroll and whose enrolls have not finished, and beside them a
  copy of the seats they hold there (the mirror). Before it grants an auto-enrolling student
  another ticket, the service judges it against those seats and these claims (here, in the
  student's own slot, which every lecture's admission can reach), and claims it only if nobody
  changed the claims meanwhile (`v`): two lectures clearing one student at once cannot both count
  the same room. PostgreSQL holds the seats; the mirror only spares reading them when it shows
  room (a mirror that shows none is confirmed there), so it may be missing (never loaded, lost,
  forgotten) but is never trusted beyond what PostgreSQL last said plus the claims' commits.

  KEYS[1] claims  hash: lecture id -> '<clearings>:<expiry ms>' (clearings: the admission calls
                  that cleared the student there and have not yet given the clearing back, see
                  'unused'), 'v' -> version (every new claim, every claim gone and every mirror
                  forgotten adds one), 'w:' .. lecture id -> a lecture whose head this student
                  blocks until a claim goes (its admission is run again then), 'm' ->
                  '<credit limit>:<valid until ms>:<stamp>' (the mirror is loaded), 'h:' .. lecture id ->
                  '<credits>:<1 primary | 0 secondary section>' (a seat held, as last loaded;
                  '?:1' as committed by a claim's enroll: the lecture's own credits)

  ARGV[1] 'read'     Output: { version, mirror ('m', or '' when not loaded), { lecture ids claimed
                     and not expired }, { held seats 'id:credits:primary' } }. Makes the hash
                     when there is none (version 0), so that a change after this read moves the
                     version a load or a claim made with it is checked against
          'claim'    ARGV[2] the version read, ARGV[3] lecture id, ARGV[4] how long it lives (ms).
                     Output: 1 claimed; 0 the claims changed since the read (read again)
          'block'    ARGV[2] the version read, ARGV[3] lecture id: the lecture waits for a claim to
                     go. Output: 1 noted; 0 the claims changed since the read (read again)
          'load'     ARGV[2] the version read before PostgreSQL was, ARGV[3] the mirror ('m'),
                     ARGV[4..] the seats held ('id:credits:primary'): the mirror replaced.
                     Output: 1 loaded; 0 the claims or seats changed since (not loaded)
          'forget'   ARGV[2] lecture id: the student's seats there changed; unless it is a
                     claim's own enroll (its release keeps the seat), the mirror goes. Nothing
                     is written where there is no hash: nothing was read that a load could use
          'unused'   ARGV[2] lecture id: one clearing there was not granted (another call's may
                     have been: the claim goes with the last)
          'release'  ARGV[2] lecture id, ARGV[3] '1' when its enroll committed the seat (into the
                     mirror, if loaded), else '': the enroll there is over, the claim goes.
          Both output the lectures waiting on this student when the claim went (their waits end
          here); else none
]]
local rcall = redis.call
local time = rcall('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local KEEP_MS = 3600000 -- the whole hash goes an hour after its last change
local op = ARGV[1]

-- What a field is: 'v', 'm', a waiting lecture ('w:'), a held seat ('h:') or a claim.
local function kind(field)
  if field == 'v' or field == 'm' then return field end
  local prefix = string.sub(field, 1, 2)
  if prefix == 'w:' or prefix == 'h:' then return prefix end
  return 'claim'
end

-- The fields of one kind.
local function fields(wanted)
  local found = {}
  for _, field in ipairs(rcall('HKEYS', KEYS[1])) do
    if kind(field) == wanted then found[#found + 1] = field end
  end
  return found
end

-- The mirror goes whole.
local function dropMirror()
  local gone = fields('h:')
  gone[#gone + 1] = 'm'
  rcall('HDEL', KEYS[1], unpack(gone))
end

-- The mirror goes, and the version moves (kept even when nothing else is), so a load that read
-- PostgreSQL before the change cannot write what it read.
local function forget()
  dropMirror()
  rcall('HINCRBY', KEYS[1], 'v', 1)
  rcall('PEXPIRE', KEYS[1], KEEP_MS)
end

-- The claims alive now and the seats held; expired claims go (a claim outlives its enroll only
-- when its instance died). A claim that expired is a claim gone: the version moves, so a
-- judgment read before cannot claim or wait against it.
local function live()
  local ids, held, expired = {}, {}, false
  local flat = rcall('HGETALL', KEYS[1])
  for i = 1, #flat, 2 do
    local field, value = flat[i], flat[i + 1]
    local k = kind(field)
    if k == 'h:' then
      held[#held + 1] = string.sub(field, 3) .. ':' .. value
    elseif k == 'claim' then
      if tonumber(string.match(value, ':(%d+)$')) <= now then
        rcall('HDEL', KEYS[1], field)
        rcall('HINCRBY', KEYS[1], 'v', 1)
        expired = true
      else
        ids[#ids + 1] = field
      end
    end
  end
  -- a seat it may have committed meanwhile (by another hand: its ticket went) is not placed
  -- (the version moved already)
  if expired then
    dropMirror()
    return ids, {}
  end
  return ids, held
end

-- The lectures waiting on this student: they are admitted again now.
local function waiters()
  local waiting = {}
  for _, field in ipairs(fields('w:')) do
    waiting[#waiting + 1] = string.sub(field, 3)
    rcall('HDEL', KEYS[1], field)
  end
  return waiting
end

if op == 'read' then
  if rcall('EXISTS', KEYS[1]) == 0 then
    rcall('HSET', KEYS[1], 'v', 0)
    rcall('PEXPIRE', KEYS[1], KEEP_MS)
  end
  local ids, held = live()
  local version = tonumber(rcall('HGET', KEYS[1], 'v') or '0')
  return { version, rcall('HGET', KEYS[1], 'm') or '', ids, held }
end

if op == 'forget' then
  if rcall('EXISTS', KEYS[1]) == 0 then return {} end
  live() -- an expired claim of the lecture holds nothing back
  if not rcall('HGET', KEYS[1], ARGV[2]) then forget() end
  return {}
end

if op == 'release' or op == 'unused' then
  local value = rcall('HGET', KEYS[1], ARGV[2])
  -- gone already (expired, or released): whoever waited is admitted again all the same
  if not value then
    -- an enroll that outlived its claim committed a seat the mirror cannot place: it goes
    if op == 'release' and ARGV[3] ~= '' then forget() end
    return waiters()
  end
  local clearings, expiry = string.match(value, '^(%d+):(%d+)$')
  if op == 'unused' and tonumber(clearings) > 1 then
    rcall('HSET', KEYS[1], ARGV[2], (tonumber(clearings) - 1) .. ':' .. expiry)
    return {}
  end
  rcall('HDEL', KEYS[1], ARGV[2])
  rcall('HINCRBY', KEYS[1], 'v', 1)
  -- the seat its enroll committed joins the mirror (a judged place is a primary taken alone)
  if op == 'release' and ARGV[3] ~= '' and rcall('HEXISTS', KEYS[1], 'm') == 1 then
    rcall('HSET', KEYS[1], 'h:' .. ARGV[2], '?:1')
  end
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
elseif op == 'load' then
  local gone = fields('h:')
  if #gone > 0 then rcall('HDEL', KEYS[1], unpack(gone)) end
  rcall('HSET', KEYS[1], 'm', ARGV[3])
  for i = 4, #ARGV do
    local id, rest = string.match(ARGV[i], '^(%d+):(.*)$')
    rcall('HSET', KEYS[1], 'h:' .. id, rest)
  end
else
  rcall('HSET', KEYS[1], 'w:' .. ARGV[3], 1)
end
rcall('PEXPIRE', KEYS[1], KEEP_MS)
return 1
