--[[
  Pop-and-grant: admits the head of a lecture's queue, granting each student a ticket.
  Everything it limits by is recomputed here from what Redis holds, so any number of
  instances, ticks or duplicated events running it can never over-admit.

  KEYS[1] queue         sorted set: student -> join sequence number
  KEYS[2] tickets       sorted set: student -> ticket expiry (ms), the unconsumed tickets
  KEYS[3] inflight      sorted set: student -> deadline (ms), tickets consumed by an enroll
                        whose transaction has not been recorded; they still hold a seat, even
                        past the deadline, until recovery (regrant-3) settles them
  KEYS[4] facts         hash: seatsLeft, batchSize, ttl, maxActive, opensAt, closesAt (ms),
                        pkgSeats (a primary with secondary sections: the packages they can
                        still seat; admission never grants more tickets than that either)
  KEYS[5] stats         hash: tickSlot, admittedTotal, expired
  KEYS[6] ticketPrefix  prefix of ticket keys; a student's ticket key is this .. student id
                        (passed in KEYS so the hash tag, and so the slot, is the caller's)
  KEYS[7] enrolled      set of students holding a seat (never admitted again)
  KEYS[8] admitLog      sorted set: time (ms) -> admittedTotal, for the observed admission rate
  KEYS[9] prequeue      the pre-queue (see includes/draw.lua)
  KEYS[10] drawn        the pre-queue as drawn
  KEYS[11] draw         hash: the draw marker (at, count, first)
  KEYS[12] seq          counter of queue sequence numbers
  KEYS[13] grants       hash: student -> queue sequence number of their ticket
  KEYS[14] admissions   stream: the admission log (student, queue sequence number, time, via)
  KEYS[15] wpre         hash: student -> member, the students in a window's pre-queue
  KEYS[16] wqueue       the windows' pre-queues, drawn at each window's opening (the draw sweep
                        and joins run those draws: includes/window-draw.lua)
  KEYS[17] wopen        hash: window -> the opening its pre-queue waits for
  KEYS[18] wruns        sorted set: the queue numbers window draws gave (first -> last), for the
                        admission log's `via`
  KEYS[19] auto         hash: student -> settings of the students the service enrolls itself

  ARGV[1] 'tick' (the cron: at most once per interval slot, whichever instance comes first; one
          that admitted nobody for want of ARGV[3]'s room leaves the slot to the next),
          'event' (a slot may have freed: fill spare room now) or 'draw' (run the draw if it
          is due, and the closed window's clean-up, but admit nobody)
  ARGV[2] the cron interval in ms
  ARGV[3] how many students who auto-enroll this call may grant (the caller's room for enrolls
          of its own, so a ticket it grants is used within a second); -1: no such limit.
          Admission stops at the first auto-enrolling student past it, who stays at the head
          with everyone behind: the queue's order holds, and the next call goes on from there
  ARGV[4] '1': auto-enrolling students are granted only once cleared (src/auto-enroll/clearance.ts:
          their credits and meetings claimed in their own slot, against the seats they hold and
          the tickets they have out, so no ticket is granted that their enroll would refuse);
          anything else: granted as the others are
  ARGV[5..] the students the caller cleared. Admission stops at the first auto-enrolling student
          not among them, who stays at the head with everyone behind, and answers `needs`

  Once opensAt has come, the pre-queue is drawn first (once). Every grant is appended to the
  admission log in this same step, so the log and the tickets never disagree.

  Output: { admitted, waiting, expired, lapsed, idle, { student... }, expiresAt, drew, autos, paced,
            { needs... } }
    expired  tickets this call found past their expiry
    lapsed   in-flight holds past their deadline (the caller recovers them)
    students the students granted a ticket by this call
    expiresAt their tickets' expiry (ms since the epoch)
    idle     1 when nothing is left to watch: no queue, pre-queue (a window's too), ticket or
             hold; a closed lecture clears the queue, the pre-queues and the tickets first
             (their students see CLOSED)
    drew     1 when this call ran the draw (the caller records it in PostgreSQL)
    autos    how many of the students granted auto-enroll (counted under ARGV[3]'s limit only)
    paced    1 when it stopped at an auto-enrolling student for want of ARGV[3]'s room
    needs    when it stopped at an auto-enrolling student not cleared (ARGV[4]): that student
             and the auto-enrolling students behind them this call could have granted, to clear
  Errors: { -1 } when the facts are missing or incomplete (the caller rebuilds them)
]]
local rcall = redis.call

--- @include "draw"

local time = rcall('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

local f = rcall('HMGET', KEYS[4], 'seatsLeft', 'batchSize', 'ttl', 'maxActive', 'opensAt', 'closesAt', 'pkgSeats')
if not f[1] then return { -1 } end
local seatsLeft, batch, ttlMs, maxActive = tonumber(f[1]), tonumber(f[2]), tonumber(f[3]) * 1000, tonumber(f[4])
if f[7] and f[7] ~= '' then seatsLeft = math.min(seatsLeft, tonumber(f[7])) end

-- Tickets past their expiry are gone (their keys expired); stop counting them.
local expired = rcall('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if expired > 0 then rcall('HINCRBY', KEYS[5], 'expired', expired) end
local lapsed = rcall('ZCOUNT', KEYS[3], '-inf', now)

local granted = {}
local drew = 0
local autoRoom = tonumber(ARGV[3] or '-1')
local autos, paced = 0, 0
local clearing = ARGV[4] == '1'
local cleared = {}
for j = 5, #ARGV do cleared[ARGV[j]] = true end
local needs = {}
local function answer()
  local waiting = rcall('ZCARD', KEYS[1])
  local held = rcall('ZCARD', KEYS[2]) + rcall('ZCARD', KEYS[3])
  local idle = 0
  if waiting == 0 and held == 0 and rcall('EXISTS', KEYS[9]) == 0 and rcall('EXISTS', KEYS[16]) == 0 then
    idle = 1
    rcall('DEL', KEYS[13]) -- nobody holds an admission whose number could still be asked for
  end
  return { #granted, waiting, expired, lapsed, idle, granted, now + ttlMs, drew, autos, paced, needs }
end

local closesAt = tonumber(f[6])
if closesAt and now >= closesAt then
  -- Closed: nobody will be admitted; the queue and unused tickets go now (not the holds,
  -- whose enrolls are still being answered). A window that closed before its draw ran is
  -- drawn first all the same (API.md v3: every lecture is drawn, its seed published), so
  -- its pre-queued students are recorded as drawn rather than dropped unseen.
  drew = drawIfDue(now, tonumber(f[5]), 9, 10, 11, 1, 12)
  for _, student in ipairs(rcall('ZRANGE', KEYS[2], 0, -1)) do rcall('DEL', KEYS[6] .. student) end
  rcall('DEL', KEYS[1], KEYS[2], KEYS[8], KEYS[9], KEYS[15], KEYS[16], KEYS[17], KEYS[18])
  return answer()
end

local slotBefore = nil
if ARGV[1] == 'tick' then
  local slot = math.floor(now / tonumber(ARGV[2]))
  slotBefore = rcall('HGET', KEYS[5], 'tickSlot')
  if tonumber(slotBefore or '-1') == slot then return answer() end
  rcall('HSET', KEYS[5], 'tickSlot', slot)
end
if now < tonumber(f[5]) then return answer() end
drew = drawIfDue(now, tonumber(f[5]), 9, 10, 11, 1, 12)
if ARGV[1] == 'draw' then return answer() end
-- Queue sequence numbers up to the draw's last came from the draw.
local d = rcall('HMGET', KEYS[11], 'first', 'count')
local lastDrawn = tonumber(d[1] or '1') + tonumber(d[2] or '0') - 1

local held = rcall('ZCARD', KEYS[2]) + rcall('ZCARD', KEYS[3])
local room = math.min(batch, maxActive - held, seatsLeft - held)
local hasRuns = rcall('EXISTS', KEYS[18]) == 1
local admitted = 0
-- An auto-enrolling student the caller has no room for, or has not cleared, goes back to the
-- head with everyone popped behind them (their own numbers: the order is as before).
local stopped = false
local function putBack(popped, from)
  for j = from, #popped, 2 do rcall('ZADD', KEYS[1], popped[j + 1], popped[j]) end
  stopped = true
end
local function autoEnrolls(student)
  local settings = rcall('HGET', KEYS[19], student)
  return settings and settings ~= ''
end
-- The auto-enrolling students at the head this call could have granted, for the caller to clear.
local function listNeeds()
  local most = room - admitted
  if autoRoom >= 0 then most = math.min(most, autoRoom - autos) end
  if most <= 0 then return end
  for _, student in ipairs(rcall('ZRANGE', KEYS[1], 0, room - admitted - 1)) do
    if rcall('SISMEMBER', KEYS[7], student) == 0 and autoEnrolls(student) then
      needs[#needs + 1] = student
      if #needs >= most then return end
    end
  end
end
while admitted < room and not stopped do
  local popped = rcall('ZPOPMIN', KEYS[1], room - admitted)
  if #popped == 0 then break end
  for i = 1, #popped, 2 do
    local student, seq = popped[i], popped[i + 1]
    local enrolled = rcall('SISMEMBER', KEYS[7], student) == 1
    if not enrolled and (autoRoom >= 0 or clearing) and autoEnrolls(student) then
      if autoRoom >= 0 and autos >= autoRoom then
        putBack(popped, i)
        paced = 1
        break
      end
      if clearing and not cleared[student] then
        putBack(popped, i)
        listNeeds()
        break
      end
      autos = autos + 1
    end
    if not enrolled then
      rcall('SET', KEYS[6] .. student, now + ttlMs, 'PX', ttlMs)
      rcall('ZADD', KEYS[2], now + ttlMs, student)
      rcall('HSET', KEYS[13], student, seq)
      local via = 'queue'
      if tonumber(seq) <= lastDrawn then
        via = 'draw'
      elseif hasRuns then
        -- a registration window's draw gave it, if the run starting at or before it covers it
        local run = rcall('ZREVRANGEBYSCORE', KEYS[18], seq, '-inf', 'LIMIT', 0, 1)
        if #run > 0 and tonumber(run[1]) >= tonumber(seq) then via = 'draw' end
      end
      rcall('XADD', KEYS[14], '*', 's', student, 'q', seq, 't', now, 'v', via)
      admitted = admitted + 1
      granted[admitted] = student
    end
  end
end

-- A tick that admitted nobody for want of its caller's room leaves the interval's slot to the
-- next instance's tick, which may have room.
if ARGV[1] == 'tick' and paced == 1 and admitted == 0 then
  if slotBefore then rcall('HSET', KEYS[5], 'tickSlot', slotBefore) else rcall('HDEL', KEYS[5], 'tickSlot') end
end

if admitted > 0 then
  local total = rcall('HINCRBY', KEYS[5], 'admittedTotal', admitted)
  rcall('ZADD', KEYS[8], now, total)
  rcall('ZREMRANGEBYSCORE', KEYS[8], '-inf', now - 60000)
end
return answer()
