--[[
  Reads a student's place in a lecture's queue and, when asked, joins them at the back.
  Reading and joining share one script so both see one consistent state: a student is never
  seen between the queue and a ticket. Every call on the hot path: each Redis call here is
  counted (a first join makes 14 or 15 of them, a waiting student's read 5; a join onto the
  waitlist 2 more).

  KEYS[1] queue     sorted set: student -> join sequence number
  KEYS[2] seq       counter of joins (orders same-millisecond joins strictly)
  KEYS[3] ticket    this student's ticket key (string with a TTL)
  KEYS[4] inflight  sorted set: student -> deadline (ms), tickets consumed by an enroll in progress
  KEYS[5] enrolled  set of students holding a seat
  KEYS[6] facts     hash of lecture facts (seatsLeft, ...)
  KEYS[7] tickets   sorted set: student -> ticket expiry (ms), the unconsumed tickets
  KEYS[8] prequeue  sorted set (scores 0): '<HMAC hex>:<student>' of the pre-queued students
  KEYS[9] drawn     the pre-queue as drawn (see includes/draw.lua)
  KEYS[10] draw     hash: the draw marker, present once the pre-queue was drawn
  KEYS[11..16] wpre, wqueue, wopen, wdraws, wdrawn, wruns: the registration windows'
           pre-queues of the lecture and their draws (see includes/window-draw.lua)
  KEYS[17] waitlisted  set of the students queued by a join that found no seat left
  KEYS[18] auto     hash: student -> their auto-enroll settings (JSON), '<student>!' -> the
                    refusal that last gave their place up (API.md v4)

  ARGV[1] student id
  ARGV[2] '1' to join when not already present, '0' to only read
  ARGV[3] the student's pre-queue member '<HMAC hex>:<student>', or '' (the caller knows the
          lecture has opened: then a pre-queue join is refused as NOT_OPEN)
  ARGV[4] '1' when a new join should say whether there is room to admit (event admission)
  ARGV[5] the window whose opening is the student's for this lecture ('' : the lecture's own,
          API.md v4: the later of the lecture's opensAt and their window's)
  ARGV[6] that window's opensAt (ms), as the caller knows the windows now
  ARGV[7] the student's member of that window's pre-queue, '<window>|<HMAC hex>:<student>'
          ('' when the caller, by its clock, found the window open already)
  ARGV[8] what a join's body says of auto-enroll (API.md v4): the settings (JSON) to enroll
          the student with when admitted, '-' not to, '' no body (every read passes ''; a
          repeat join whose join was refused reads its place with its body)

  Auto-enroll settings live with the place, so they are set and cleared in this same step:
  an admission the join causes at once (on any instance) finds them, and none is ever read
  from an earlier place. A new place takes the body's settings (none without a body) and
  forgets the last refusal; a repeat join with a body changes them, without keeps them; a
  join finding the student ENROLLED clears them (nothing is left to enroll); a refused join
  changes nothing.

  Waitlists (API.md v4): a join into the queue that finds no seat left is still queued while
  fewer than the facts' `waitlist` students wait (the whole queue counts), and marked in
  KEYS[17]; else it is refused FULL. A repeat join answers the place as ever. A pre-queue join
  (the lecture's own or a window's) finding no seat is refused FULL as before: the draws are
  another matter.

  Once the lecture has opened, the windows' pre-queues whose opening has come by Redis's clock
  are drawn first (each once), so a join goes behind every window drawn by now.
  Before opensAt (Redis time) a join enters the pre-queue if the window
  [opensAt - preQueueMs, opensAt) has begun; from opensAt on, the draw runs first (once), so
  a join a moment after opening still goes behind every drawn student.

  Output: { state, detail, waiting, seatsLeft, created, room, seq, drew, opened, auto, refusal }
    state 'ENROLLED' | 'ADMITTED' (detail: the ticket's expiry in ms since the epoch, as granted;
          0 while its enroll is in flight) | 'WAITING' (detail: 1-based position)
          | 'PRE_QUEUED' | 'NOT_QUEUED' | 'FULL' (join refused: no seat left, and the waitlist
            full or none)
          | 'NOT_OPEN' (join refused: before the pre-queue opens, or no pre-queue)
          | 'LAPSED' (an enroll's hold passed its deadline unrecorded: the caller recovers it,
            then reads again; until then the student is neither admitted nor free to rejoin)
    room  1 when this join found spare room (fewer tickets held, unconsumed or in an enroll,
          than maxActive and than the seats left), so admitting now would admit someone;
          only asked for with ARGV[4]
    seq   for WAITING only: the student's join sequence number (0 otherwise)
    drew  1 when this call ran the lecture's draw, 2 a window's, 3 both (the caller records
          them in PostgreSQL)
          | 'NOT_OPEN' also when the student's window has not opened by Redis's clock and the
            caller, by a clock ahead of it, brought no member to pre-queue them with
    opened 1 when this call saw the draw marker (the lecture has opened and was drawn: no
          pre-queue member is needed for it again); 0 when it did not look
    auto  1 when the student has a place (PRE_QUEUED, WAITING, ADMITTED, LAPSED) that auto-enrolls
    refusal  the refusal that last gave their place up (JSON), '' for none
  The admission rate is not read here: every waiting student's answer would pay for it, and
  the service keeps each lecture's, read at most once a second (observed-rate-1.lua).
  Errors: { -1 } when the lecture's facts are missing or incomplete (the caller rebuilds them)
]]
local rcall = redis.call
local student = ARGV[1]

--- @include "draw"
--- @include "window-draw"

local f = rcall('HMGET', KEYS[6], 'seatsLeft', 'opensAt', 'preQueueMs', 'maxActive', 'pkgSeats', 'waitlist')
if not f[1] then return { -1 } end
local seatsLeft, opensAt, preQueueMs = tonumber(f[1]), tonumber(f[2]), tonumber(f[3] or '0')
-- What can still be seated: a primary with secondary sections also needs a seat in them.
local seats = seatsLeft
if f[5] and f[5] ~= '' then seats = math.min(seats, tonumber(f[5])) end

local drew, opened = 0, 0
-- LAPSED too: an enroll's hold, still the student's place until recovery settles it.
local placed = { PRE_QUEUED = true, WAITING = true, ADMITTED = true, LAPSED = true }
local refusalField = student .. '!'
-- The join's auto-enroll settings applied to the place it answers, and what they are now.
local function autoOf(state, created)
  local body = ARGV[8]
  if created == 1 then
    rcall('HDEL', KEYS[18], refusalField)
    if body ~= '' and body ~= '-' then rcall('HSET', KEYS[18], student, body) else rcall('HDEL', KEYS[18], student) end
  elseif placed[state] then
    -- a repeat join's body, also when only reading (the join was refused, its place answered)
    if body == '-' then rcall('HDEL', KEYS[18], student) elseif body ~= '' then rcall('HSET', KEYS[18], student, body) end
  elseif state == 'ENROLLED' and ARGV[2] == '1' then
    rcall('HDEL', KEYS[18], student)
  end
  local v = rcall('HMGET', KEYS[18], student, refusalField)
  return (v[1] and placed[state]) and 1 or 0, v[2] or ''
end
local function answer(state, detail, created, room, seq, waiting)
  local auto, refusal = autoOf(state, created)
  return { state, detail, waiting or rcall('ZCARD', KEYS[1]), seatsLeft, created, room or 0, seq or 0, drew, opened, auto, refusal }
end
local function waitingAt(seq)
  return answer('WAITING', rcall('ZRANK', KEYS[1], student) + 1, 0, 0, tonumber(seq))
end

-- First the queue: a queued student holds nothing else (admission pops before it grants, and a
-- join never queues a holder), so most reads end here.
local seq = rcall('ZSCORE', KEYS[1], student)
if seq then return waitingAt(seq) end
if rcall('SISMEMBER', KEYS[5], student) == 1 then return answer('ENROLLED', 0, 0) end
-- A ticket's value is its exact expiry, set when granted (GET never returns an expired key).
local expiresAt = rcall('GET', KEYS[3])
if expiresAt then return answer('ADMITTED', tonumber(expiresAt), 0) end
local time = rcall('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
-- An enroll in progress holds the admission until it is recorded.
local deadline = rcall('ZSCORE', KEYS[4], student)
if deadline then
  if tonumber(deadline) <= now then return answer('LAPSED', 0, 0) end
  return answer('ADMITTED', 0, 0)
end
if rcall('EXISTS', KEYS[10]) == 1 then
  opened = 1
else
  drew = drawIfDue(now, opensAt, 8, 9, 10, 1, 2)
  opened = drew
  -- The draw just moved the pre-queue into the queue: this student may be in it now.
  seq = drew == 1 and rcall('ZSCORE', KEYS[1], student)
  if seq then return waitingAt(seq) end
end
local W = { queue = 1, seq = 2, wpre = 11, wqueue = 12, wopen = 13, wdraws = 14, wdrawn = 15, wruns = 16 }
local window, windowAt = ARGV[5], tonumber(ARGV[6])
-- The student's window, if it waits to draw, waits for its opening as the caller knows it now.
if window ~= '' and rcall('HEXISTS', KEYS[13], window) == 1 then rcall('HSET', KEYS[13], window, windowAt) end
if opened == 1 and #drawDueWindows(now, W) > 0 then
  drew = drew + 2
  seq = rcall('ZSCORE', KEYS[1], student)
  if seq then return waitingAt(seq) end
end
-- In a window's pre-queue: until that window draws.
if rcall('HEXISTS', KEYS[11], student) == 1 then return answer('PRE_QUEUED', 0, 0) end
if window ~= '' and now < windowAt then
  -- The student's opening is a window's, still to come: its pre-queue (the caller judged the
  -- pre-queue's time by the window), drawn at the window's opening behind everyone waiting.
  if ARGV[2] ~= '1' then return answer('NOT_QUEUED', 0, 0) end
  if ARGV[7] == '' then return answer('NOT_OPEN', 0, 0) end
  if seats <= 0 then return answer('FULL', 0, 0) end
  rcall('HSET', KEYS[11], student, ARGV[7])
  rcall('ZADD', KEYS[12], 0, ARGV[7])
  rcall('HSET', KEYS[13], window, windowAt)
  return answer('PRE_QUEUED', 0, 1)
end
if opened == 0 then
  -- Not opened yet: the pre-queue.
  local member = ARGV[3]
  if member ~= '' and rcall('ZSCORE', KEYS[8], member) then return answer('PRE_QUEUED', 0, 0) end
  if ARGV[2] ~= '1' then return answer('NOT_QUEUED', 0, 0) end
  if member == '' or preQueueMs == 0 or now < opensAt - preQueueMs then return answer('NOT_OPEN', 0, 0) end
  if seats <= 0 then return answer('FULL', 0, 0) end
  rcall('ZADD', KEYS[8], 0, member)
  return answer('PRE_QUEUED', 0, 1)
end

if ARGV[2] ~= '1' then return answer('NOT_QUEUED', 0, 0) end
-- Drawn, but the window was moved later since: closed to joins until it opens again.
if now < opensAt then return answer('NOT_OPEN', 0, 0) end
-- No seat left: the waitlist, while fewer than its size wait.
local waitlisted = seats <= 0
if waitlisted then
  local queued = rcall('ZCARD', KEYS[1])
  if queued >= tonumber(f[6] or '0') then return answer('FULL', 0, 0, 0, 0, queued) end
end

seq = rcall('INCR', KEYS[2])
rcall('ZADD', KEYS[1], seq, student)
if waitlisted then rcall('SADD', KEYS[17], student) end
local waiting = rcall('ZCARD', KEYS[1])
local room = 0
if ARGV[4] == '1' then
  -- Unconsumed tickets first: at an opening they alone reach the limit, and the second count
  -- is not needed.
  local maxActive = tonumber(f[4])
  local held = rcall('ZCARD', KEYS[7])
  if held < maxActive and held < seats then
    held = held + rcall('ZCARD', KEYS[4])
    if held < maxActive and held < seats then room = 1 end
  end
end
return answer('WAITING', waiting, 1, room, seq, waiting)
